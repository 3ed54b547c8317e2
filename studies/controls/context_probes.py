"""Context probes: generated errors that only the document reveals (docs/protocols/spam-and-quality.md).

A spam copy or an injected error (studies/controls/spam.py, error_injection.py)
is wrong in the sentence itself: an annotator who reads each sentence alone
catches it. A context probe changes one word so that the sentence still reads
well alone but contradicts the text before it, the phenomena document-level
evaluation is about (Läubli, Sennrich & Volk 2018; Castilho 2020, 2021):

- ``term``: a word that the earlier text already used is replaced by a synonym
  from a short list (*car → vehicle*, *Auto → Wagen*, *voiture → auto*), so the
  document's terminology becomes inconsistent; the earlier use may be any
  number of sentences back;
- ``pronoun``: a third-person pronoun whose gender is set by a mention two or
  more sentences back (a pronoun of the same gender, or a gendered noun such as
  *mother*, *Vater*, *sœur*), with no gendered mention in the sentence just
  before and none of the other gender in between, gets the other gender
  (*she → he*, *er → sie*, *elle → il*);
- ``connective``: a connective opening a sentence, which relates it to the
  sentence before, is replaced by one of the contrary relation (*But → So*,
  *Aber → Also*, *Mais → Donc*: error_injection.OPPOSITE_CONNECTIVES, restricted to
  connectives that link two sentences);
- ``address`` (French): the one form of address of a sentence is switched
  between *tu* and *vous* (*tu veux → vous voulez*, *s'il te plaît → s'il vous
  plaît*, *ton → votre*) when the earlier text already chose the other: every
  form of address in the earlier lines on screen is of one register, and the
  sentence has no other form of address (which would make it wrong alone).
  Both speakers of a DiaBLa dialogue are adults playing a scenario together and
  address each other the same way; a dialogue with asymmetric address would
  show both registers in its earlier lines and then gets no probe.

Word lists, not parsers, for English, German and French; other languages get no
probe. "The text before" is the lines an annotator has on screen before the
changed sentence: the item's target-side context (``target_context``, shown
when the study does not show the source), then the candidate's own earlier
sentences. When the target-side context is not on screen (a bilingual sentence
study), only connectives use it: the relation to the previous sentence reads the
same in the source; terms and pronouns then need an earlier sentence of the
candidate itself, or a context line the source-side context shows as it is (a
bilingual dialogue's turn written in the target language: ``context_shown``).

The record kept on the probe copy (``Item.metadata["context_probe"]``, never
sent to annotators) says where the error is in the changed text
(``[start, end)``), what it was, and where its evidence is: the line index
(context lines first, then the candidate's sentences) and how many sentences
back (``distance``).
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Sequence

from studies.controls.error_injection import OPPOSITE_CONNECTIVES, Edit, language_of

TERM = "term"
PRONOUN = "pronoun"
CONNECTIVE = "connective"
ADDRESS = "address"
KINDS = (TERM, PRONOUN, CONNECTIVE, ADDRESS)
LANGUAGES = ("en", "de", "fr")

#: Sentence-opening connectives that relate a sentence to the one before, and one of the contrary
#: relation (contrast ↔ consequence or addition). error_injection.OPPOSITE_CONNECTIVES where it has
#: them; subordinators such as *because* or *weil* open a clause of their own sentence, so they are
#: left out.
SENTENCE_CONNECTIVES: dict[str, dict[str, str]] = {
    "en": {**{w: OPPOSITE_CONNECTIVES["en"][w] for w in ("but", "so", "yet", "and", "however", "therefore",
                                                         "nevertheless", "moreover", "furthermore", "still")},
           "and then": "but then", "also": "but", "besides": "however", "then": "but", "otherwise": "so",
           "instead": "so", "anyway": "therefore", "in fact": "however", "actually": "so"},
    "de": {**{w: OPPOSITE_CONNECTIVES["de"][w] for w in ("aber", "also", "und", "jedoch", "deshalb", "daher",
                                                         "deswegen", "trotzdem", "dennoch", "außerdem")},
           "dann": "aber", "sonst": "deshalb", "stattdessen": "deshalb", "übrigens": "deshalb"},
    "fr": {**{w: OPPOSITE_CONNECTIVES["fr"][w] for w in ("mais", "donc", "cependant", "pourtant", "néanmoins",
                                                         "toutefois", "alors", "en revanche", "par contre",
                                                         "en effet")},
           "et": "mais", "et puis": "mais", "puis": "pourtant", "ensuite": "pourtant", "aussi": "pourtant",
           "sinon": "donc", "du coup": "pourtant", "en fait": "donc", "d'ailleurs": "pourtant", "enfin": "donc"},
}
#: Interjections a sentence may open with before its connective ("Oh, but …", "Oui, mais …").
_INTERJECTIONS = {"en": ("oh", "ah", "well", "yes", "yeah", "no", "ok", "okay", "right", "hmm", "hm"),
                  "de": ("oh", "ah", "na", "ja", "nein", "ok", "okay", "gut", "hm"),
                  "fr": ("oh", "ah", "eh", "bon", "oui", "non", "ok", "d'accord", "bah", "ben", "hm")}

#: Synonyms for terms: replacing one use of a word the text already used makes its terminology
#: inconsistent while the sentence still reads well. Symmetric pairs (each word maps to the other).
_SYNONYM_PAIRS: dict[str, tuple[tuple[str, str], ...]] = {
    "en": (("car", "vehicle"), ("film", "movie"), ("flat", "apartment"), ("trip", "journey"), ("job", "work"),
           ("shop", "store"), ("holiday", "vacation"), ("plane", "aircraft"), ("doctor", "physician"),
           ("present", "gift"), ("house", "home"), ("kids", "children"), ("mum", "mother"), ("dad", "father"),
           ("friend", "mate"), ("boss", "manager"), ("meal", "dinner"), ("town", "city"), ("road", "street"),
           ("picture", "photo"), ("story", "tale"), ("problem", "issue"), ("answer", "reply"),
           ("idea", "notion"), ("money", "cash"), ("room", "chamber"), ("book", "novel"), ("ticket", "pass"),
           ("bag", "suitcase"), ("dog", "puppy"), ("cat", "kitten"), ("phone", "mobile"), ("garden", "yard"),
           ("teacher", "instructor"), ("company", "firm"), ("price", "cost"), ("mistake", "error"),
           ("island", "isle"), ("beach", "shore"), ("boat", "ship"), ("hotel", "inn"), ("restaurant", "eatery"),
           ("shoes", "boots"), ("wife", "spouse"), ("husband", "partner"), ("weekend", "break"),
           ("evening", "night"), ("party", "celebration"), ("exam", "test"), ("course", "class"),
           ("game", "match"), ("song", "tune"), ("wedding", "marriage"), ("church", "chapel"),
           ("forest", "woods"), ("river", "stream"), ("lake", "pond"), ("mountain", "peak"), ("lift", "elevator"),
           ("drink", "beverage"), ("biscuits", "cookies"), ("sweets", "candy"), ("rubbish", "garbage"),
           ("motorway", "highway"), ("chips", "fries"), ("trousers", "pants"), ("petrol", "gas")),
    "de": (("auto", "wagen"), ("film", "streifen"), ("wohnung", "apartment"), ("reise", "fahrt"),
           ("arbeit", "job"), ("laden", "geschäft"), ("urlaub", "ferien"), ("flugzeug", "maschine"),
           ("arzt", "doktor"), ("geschenk", "präsent"), ("haus", "heim"), ("kinder", "kids"), ("chef", "boss"),
           ("essen", "mahlzeit"), ("stadt", "ort"), ("straße", "gasse"), ("bild", "foto"), ("problem", "frage"),
           ("antwort", "erwiderung"), ("idee", "einfall"), ("geld", "bargeld"), ("zimmer", "raum"),
           ("buch", "roman"), ("karte", "ticket"), ("tasche", "koffer"), ("hund", "welpe"), ("handy", "telefon"),
           ("garten", "hof"), ("lehrer", "dozent"), ("firma", "unternehmen"), ("preis", "kosten"),
           ("fehler", "irrtum"), ("strand", "ufer"), ("boot", "schiff"), ("hotel", "pension"),
           ("restaurant", "lokal"), ("schuhe", "stiefel"), ("abend", "nacht"), ("feier", "fest"),
           ("prüfung", "test"), ("spiel", "partie"), ("lied", "song"), ("hochzeit", "heirat"), ("wald", "forst"),
           ("fluss", "strom"), ("berg", "gipfel"), ("freund", "kumpel")),
    "fr": (("voiture", "auto"), ("film", "long-métrage"), ("appartement", "logement"), ("voyage", "périple"),
           ("travail", "boulot"), ("magasin", "boutique"), ("vacances", "congés"), ("avion", "appareil"),
           ("médecin", "docteur"), ("cadeau", "présent"), ("maison", "demeure"), ("enfants", "gamins"),
           ("patron", "chef"), ("repas", "dîner"), ("ville", "cité"), ("rue", "route"), ("photo", "image"),
           ("problème", "souci"), ("réponse", "réplique"), ("idée", "notion"), ("argent", "monnaie"),
           ("chambre", "pièce"), ("livre", "roman"), ("billet", "ticket"), ("sac", "valise"), ("chien", "chiot"),
           ("téléphone", "portable"), ("jardin", "parc"), ("professeur", "enseignant"), ("entreprise", "société"),
           ("prix", "coût"), ("erreur", "faute"), ("plage", "rive"), ("bateau", "navire"), ("hôtel", "auberge"),
           ("restaurant", "bistrot"), ("chaussures", "bottes"), ("soirée", "nuit"), ("fête", "célébration"),
           ("examen", "épreuve"), ("cours", "leçon"), ("jeu", "partie"), ("chanson", "air"),
           ("mariage", "noces"), ("église", "chapelle"), ("forêt", "bois"), ("rivière", "fleuve"),
           ("montagne", "sommet"), ("ami", "copain"), ("amie", "copine"), ("histoire", "récit"),
           ("boulot", "emploi"), ("week-end", "congé"), ("gâteau", "dessert"), ("musique", "mélodie"),
           ("boisson", "breuvage"), ("resto", "restaurant")),
}
SYNONYMS: dict[str, dict[str, str]] = {
    language: {**{a: b for a, b in pairs}, **{b: a for a, b in pairs if b not in dict(pairs)}}
    for language, pairs in _SYNONYM_PAIRS.items()
}

#: Third-person pronouns by gender, and the swap that gives the other gender. German *sie* and *ihr(e)*
#: are left out as swap sources and as mentions (they are also "they", "you" and "their"): a German
#: feminine referent is known by its noun only.
_MASCULINE = {"en": ("he", "him", "his", "himself"), "de": ("er", "ihn", "ihm", "sein", "seine", "seinen",
                                                           "seinem", "seiner", "seines"),
              "fr": ("il", "ils", "lui-même", "celui")}
_FEMININE = {"en": ("she", "her", "hers", "herself"), "de": (),
             "fr": ("elle", "elles", "elle-même", "celle")}
_SWAP = {
    "en": {"he": "she", "she": "he", "him": "her", "his": "her", "hers": "his", "himself": "herself",
           "herself": "himself"},  # "her": him or his, by what follows
    "de": {"er": "sie", "ihn": "sie", "ihm": "ihr", "sein": "ihr", "seine": "ihre", "seinen": "ihren",
           "seinem": "ihrem", "seiner": "ihrer", "seines": "ihres"},
    "fr": {"il": "elle", "elle": "il", "ils": "elles", "elles": "ils"},
}
#: Nouns whose gender is the referent's (a pronoun two sentences later agrees with them).
_GENDERED_NOUNS = {
    "en": ({"man", "boy", "father", "dad", "brother", "son", "husband", "boyfriend", "uncle", "grandfather",
            "grandpa", "mr", "sir", "king", "gentleman", "nephew"},
           {"woman", "girl", "mother", "mum", "mom", "sister", "daughter", "wife", "girlfriend", "aunt",
            "grandmother", "grandma", "mrs", "ms", "madam", "queen", "lady", "niece"}),
    "de": ({"mann", "junge", "vater", "papa", "bruder", "sohn", "ehemann", "freund", "onkel", "opa", "herr",
            "könig", "neffe"},
           {"frau", "mädchen", "mutter", "mama", "schwester", "tochter", "ehefrau", "freundin", "tante", "oma",
            "königin", "nichte"}),
    "fr": ({"homme", "garçon", "père", "papa", "frère", "fils", "mari", "copain", "oncle", "grand-père",
            "monsieur", "roi", "neveu"},
           {"femme", "fille", "mère", "maman", "sœur", "soeur", "épouse", "copine", "tante", "grand-mère",
            "madame", "reine", "nièce"}),
}
#: French determiners that show the gender of the noun they open (a thing is "il" or "elle" by it);
#: *le*, *la* and *l'* are left out: they are also object pronouns.
_GENDERED_DETERMINERS = {"fr": ({"un", "mon", "ton", "son", "ce", "cet", "du", "au"},
                                {"une", "ma", "ta", "sa", "cette"})}
#: French *il* that refers to nothing (*il y a, il faut, il fait beau*): never a probe.
_IMPERSONAL_IL = re.compile(r"il\s+(?:y\b|faut|fallait|faudra|fait|pleut|pleuvait|neige|s['’]agit|semble|para[iî]t|vaut|reste|suffit|"
                            r"est\s+(?:temps|possible|important|difficile|facile|vrai|dommage|normal))",
                            re.IGNORECASE)

#: French forms of address, *tu* (T) and *vous* (V): the swappable ones (subject and verb, the fixed
#: *s'il te plaît*, possessives whose V form needs no noun gender) and every marker of each register.
_T_TO_V = {
    "tu es": "vous êtes", "tu as": "vous avez", "tu vas": "vous allez", "tu veux": "vous voulez",
    "tu peux": "vous pouvez", "tu sais": "vous savez", "tu vois": "vous voyez", "tu dois": "vous devez",
    "tu fais": "vous faites", "tu crois": "vous croyez", "tu penses": "vous pensez", "tu aimes": "vous aimez",
    "tu viens": "vous venez", "tu connais": "vous connaissez", "tu dis": "vous dites", "tu prends": "vous prenez",
    "tu pourrais": "vous pourriez", "tu voudrais": "vous voudriez", "tu devrais": "vous devriez",
    "tu serais": "vous seriez", "tu aurais": "vous auriez", "tu étais": "vous étiez", "tu avais": "vous aviez",
    "tu trouves": "vous trouvez", "tu préfères": "vous préférez", "tu veux bien": "vous voulez bien",
    "peux-tu": "pouvez-vous", "veux-tu": "voulez-vous", "as-tu": "avez-vous", "es-tu": "êtes-vous",
    "sais-tu": "savez-vous", "vas-tu": "allez-vous", "crois-tu": "croyez-vous", "penses-tu": "pensez-vous",
    "connais-tu": "connaissez-vous", "aimes-tu": "aimez-vous", "pourrais-tu": "pourriez-vous",
    "voudrais-tu": "voudriez-vous",
    "s'il te plaît": "s'il vous plaît", "ton": "votre", "ta": "votre", "tes": "vos",
}
_V_TO_T = {**{v: t for t, v in _T_TO_V.items() if t not in ("ton", "ta", "tes")}, "vos": "tes"}
_T_MARKERS = re.compile(r"\b(?:tu|te|toi|ton|ta|tes|tien|tienne|tiens|tiennes)\b|\bt['’](?=[^\W\d_])",
                        re.IGNORECASE)
_V_MARKERS = re.compile(r"\b(?:vous|votre|vos|vôtre|vôtres)\b", re.IGNORECASE)
#: *tu* and *ta* etc. also open other words or idioms where they are no address: a marker is a whole word
#: and a possessive is followed by a word.
_ADDRESS_FORMS = re.compile(r"(?<![\w'’-])(?:" + "|".join(
    re.escape(w).replace(r"\ ", r"\s+").replace("'", "['’]")
    for w in sorted({*_T_TO_V, *_V_TO_T}, key=len, reverse=True)) + r")(?![\w'’-])", re.IGNORECASE)


def _register(line: str) -> set[str]:
    """The registers of address ("T", "V") a French line uses."""
    return ({"T"} if _T_MARKERS.search(line) else set()) | ({"V"} if _V_MARKERS.search(line) else set())


def _address_probes(lines: list[str], first: int, offsets: list[tuple[int, int]], text: str, language: str,
                    visible: list[bool]) -> list[Probe]:
    if language != "fr":
        return []
    probes = []
    for k, (a, b) in enumerate(offsets):
        line = first + k
        sentence = text[a:b]
        if len(_T_MARKERS.findall(sentence)) + len(_V_MARKERS.findall(sentence)) != 1:
            continue
        register = _register(sentence)
        earlier = [j for j in range(line) if visible[j] and _register(lines[j])]
        if not earlier or set().union(*(_register(lines[j]) for j in earlier)) != register:
            continue
        m = _ADDRESS_FORMS.search(sentence)
        if m is None or not _register(m.group(0)) == register:
            continue
        key = re.sub(r"\s+", " ", m.group(0).lower()).replace("’", "'")
        if key == "ton" and re.search(r"\b(?:le|un|ce|du|de|mon|son|même)\s+$", sentence[:m.start()], re.IGNORECASE):
            continue  # the noun *ton* (tone)
        table = _T_TO_V if register == {"T"} else _V_TO_T
        if key not in table or (key in ("ton", "ta", "tes", "vos") and not re.match(r"\s+[^\W\d_]", sentence[m.end():])):
            continue
        replacement = _cased(table[key], m.group(0)).replace("'", "’") if "’" in m.group(0) else _cased(table[key],
                                                                                                           m.group(0))
        edit = Edit(ADDRESS, a + m.start(), a + m.end(), replacement, a + m.start(), a + m.start() + len(replacement))
        evidence = earlier[-1]
        probes.append(_probe(text, edit, evidence_line=evidence, error_line=line, evidence=lines[evidence]))
    return probes


_WORD = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*")
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")
_OPENING = re.compile(r"^[\s\"'“”«»‘’(\-–—]*")


@dataclass(frozen=True)
class Probe:
    """One context probe: the changed text, where the error is in it, and where its evidence is."""
    kind: str
    text: str
    start: int
    end: int
    before: str
    after: str
    #: Index of the line holding the evidence (context lines first, then the candidate's sentences),
    #: and of the line holding the error; ``distance`` = error line − evidence line.
    evidence_line: int
    error_line: int
    evidence: str
    edit: Edit

    @property
    def distance(self) -> int:
        return self.error_line - self.evidence_line

    def as_metadata(self) -> dict[str, object]:
        """What the probe copy keeps (researcher side only) to score annotators against."""
        return {"kind": self.kind, "start": self.start, "end": self.end, "before": self.before, "after": self.after,
                "evidence": self.evidence, "evidence_line": self.evidence_line, "error_line": self.error_line,
                "distance": self.distance}


def _cased(word: str, like: str) -> str:
    if like.isupper() and len(like) > 1:
        return word.upper()
    if like[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def sentence_offsets(text: str, sentences: Sequence[str] = ()) -> list[tuple[int, int]]:
    """``[start, end)`` of each sentence of a candidate's text: its sentence list where that is the text's,
    else one a line, else split after . ! ? …"""
    spans: list[tuple[int, int]] = []
    pos = 0
    listed = [s for s in sentences if s]
    if listed and all(s in text for s in listed):
        for sentence in listed:
            start = text.find(sentence, pos)
            if start < 0:
                break
            spans.append((start, start + len(sentence)))
            pos = start + len(sentence)
        else:
            return spans
        spans, pos = [], 0
    pieces = [line for line in text.split("\n") if line.strip()]
    if len(pieces) <= 1:
        pieces = [s for s in _SENTENCE_END.split(text.strip()) if s]
    for piece in pieces:
        start = text.find(piece, pos)
        spans.append((start, start + len(piece)))
        pos = start + len(piece)
    return spans


def _words(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group(0)) for m in _WORD.finditer(text)]


def _gender_of(word: str, following: str, language: str) -> str | None:
    """"m", "f" or None: the grammatical gender of a third-person mention (pronoun or gendered noun)."""
    lowered = word.lower()
    if language == "fr" and lowered == "il" and _IMPERSONAL_IL.match(word + following):
        return None
    determiners = _GENDERED_DETERMINERS.get(language, (set(), set()))
    if lowered in _MASCULINE[language] or lowered in _GENDERED_NOUNS[language][0] or lowered in determiners[0]:
        return "m"
    if lowered in _FEMININE[language] or lowered in _GENDERED_NOUNS[language][1] or lowered in determiners[1]:
        return "f"
    return None


def _mentions(line: str, language: str) -> list[tuple[int, str]]:
    """(offset, gender) of each gendered mention in a line."""
    found = []
    for start, end, word in _words(line):
        gender = _gender_of(word, line[end:end + 20], language)
        if gender:
            found.append((start, gender))
    return found


def _connective_probes(lines: list[str], first: int, offsets: list[tuple[int, int]], text: str,
                       language: str) -> list[Probe]:
    opposites = SENTENCE_CONNECTIVES[language]
    alternatives = sorted(opposites, key=len, reverse=True)
    pattern = re.compile(r"(?:" + "|".join(re.escape(w).replace(r"\ ", r"\s+").replace("'", "['’]")
                                           for w in alternatives) + r")(?![\w'’-])", re.IGNORECASE)
    interjection = re.compile(r"(?:" + "|".join(re.escape(w).replace("'", "['’]") for w in _INTERJECTIONS[language])
                              + r")[,!.]?\s+", re.IGNORECASE)
    probes = []
    for k, (a, b) in enumerate(offsets):
        line = first + k
        if line == 0 or not lines[line - 1].strip():
            continue
        sentence = text[a:b]
        lead = _OPENING.match(sentence)
        at = lead.end() if lead else 0
        opened = interjection.match(sentence, at)
        m = pattern.match(sentence, at) or (pattern.match(sentence, opened.end()) if opened else None)
        if not m:
            continue
        key = re.sub(r"\s+", " ", m.group(0).lower()).replace("’", "'")
        replacement = _cased(opposites[key], m.group(0))
        start = a + m.start()
        edit = Edit(CONNECTIVE, start, a + m.end(), replacement, start, start + len(replacement))
        probes.append(_probe(text, edit, evidence_line=line - 1, error_line=line, evidence=lines[line - 1]))
    return probes


def _term_probes(lines: list[str], first: int, offsets: list[tuple[int, int]], text: str, language: str,
                 visible: list[bool]) -> list[Probe]:
    synonyms = SYNONYMS[language]
    probes = []
    for k, (a, b) in enumerate(offsets):
        line = first + k
        for start, end, word in _words(text[a:b]):
            lowered = word.lower()
            if lowered not in synonyms:
                continue
            evidence = next((j for j in range(line - 1, -1, -1)
                             if visible[j] and any(w.lower() == lowered for _, _, w in _words(lines[j]))), None)
            if evidence is None:
                continue
            replacement = _cased(synonyms[lowered], word)
            edit = Edit(TERM, a + start, a + end, replacement, a + start, a + start + len(replacement))
            probes.append(_probe(text, edit, evidence_line=evidence, error_line=line, evidence=word))
    return probes


def _pronoun_probes(lines: list[str], first: int, offsets: list[tuple[int, int]], text: str, language: str,
                    visible: list[bool]) -> list[Probe]:
    swap = _SWAP[language]
    probes = []
    for k, (a, b) in enumerate(offsets):
        line = first + k
        if line < 2 or not visible[line - 1]:
            continue
        if _mentions(lines[line - 1], language):  # the sentence just before must not hold the antecedent
            continue
        sentence = text[a:b]
        for start, end, word in _words(sentence):
            gender = _gender_of(word, sentence[end:end + 20], language)
            lowered = word.lower()
            if gender is None or (lowered not in swap and lowered != "her"):
                continue
            if _mentions(sentence[:start], language):  # an antecedent in the same sentence
                break
            antecedent = None
            for j in range(line - 2, -1, -1):
                if not visible[j]:  # a line in another language may hold a mention the lists cannot read
                    break
                genders = {g for _, g in _mentions(lines[j], language)}
                if genders:
                    antecedent = j if genders == {gender} else None
                    break
            if antecedent is None:
                break
            if lowered == "her":  # before a content word a possessive (his), else an object (him)
                nxt = re.match(r"\s+([^\W\d_]+)", sentence[end:])
                replacement = "his" if nxt and nxt.group(1).lower() not in _EN_NOT_NOUN else "him"
            else:
                replacement = swap[lowered]
            replacement = _cased(replacement, word)
            edit = Edit(PRONOUN, a + start, a + end, replacement, a + start, a + start + len(replacement))
            probes.append(_probe(text, edit, evidence_line=antecedent, error_line=line,
                                 evidence=lines[antecedent]))
            break  # the first third-person pronoun of the sentence only: later ones may corefer with it
    return probes


_EN_NOT_NOUN = frozenset("""a an the and or but so to in on at by with from of for as than that this if when
    because is was are were be been will would can could should must may might not no never very too again
    up down out off over back home now then there here""".split())


def _probe(text: str, edit: Edit, *, evidence_line: int, error_line: int, evidence: str) -> Probe:
    new = text[:edit.a] + edit.replacement + text[edit.b:]
    return Probe(kind=edit.kind, text=new, start=edit.start, end=edit.end, before=text[edit.a:edit.b],
                 after=edit.replacement, evidence_line=evidence_line, error_line=error_line, evidence=evidence,
                 edit=edit)


def probe_options(*, text: str, sentences: Sequence[str] = (), context: Sequence[str] = (), language: str,
                  context_on_screen: bool | Sequence[bool] = True) -> dict[str, list[Probe]]:
    """Every context probe possible in a candidate, by kind (empty for languages without lists).

    ``context``: the target-side lines before the candidate (oldest first); ``sentences``: the
    candidate's sentence list, if it has one. ``context_on_screen``: whether the annotator has the
    context lines on screen in the target language, for all of them or one flag a line; a line not on
    screen serves connectives only (module docstring).
    """
    language = language_of(language)
    if language not in LANGUAGES or not text.strip():
        return {}
    offsets = sentence_offsets(text, sentences)
    lines = [*context, *(text[a:b] for a, b in offsets)]
    first = len(context)
    shown = ([bool(context_on_screen)] * first if isinstance(context_on_screen, bool)
             else [bool(flag) for flag in context_on_screen])
    if len(shown) != first:
        raise ValueError(f"context_on_screen: {len(shown)} flags for {first} context lines")
    visible = shown + [True] * len(offsets)
    found = {
        CONNECTIVE: _connective_probes(lines, first, offsets, text, language),
        TERM: _term_probes(lines, first, offsets, text, language, visible),
        PRONOUN: _pronoun_probes(lines, first, offsets, text, language, visible),
        ADDRESS: _address_probes(lines, first, offsets, text, language, visible),
    }
    return {kind: probes for kind, probes in found.items() if probes}


def context_shown(*, target_context: Sequence[str], source_context: Sequence[str], show_source: bool) -> list[bool]:
    """Per target-side context line, whether the annotator has it on screen: every line when the study shows
    the target-side context, else the lines whose source-side context line is the same text (a bilingual
    dialogue's turns written in the target language, shown as they are in the source-side context)."""
    if not show_source:
        return [True] * len(target_context)
    return [k < len(source_context) and bool(line.strip()) and source_context[k] == line
            for k, line in enumerate(target_context)]


def draw_probe(options: dict[str, list[Probe]], rng: random.Random) -> Probe | None:
    """A kind drawn among those possible, then one place for it (None: nothing fits)."""
    if not options:
        return None
    kind = rng.choice(sorted(options))
    return rng.choice(options[kind])
