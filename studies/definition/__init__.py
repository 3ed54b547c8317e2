"""What a study is made of beyond the models: languages, taxonomies, typography, span rules, ordering keys."""
