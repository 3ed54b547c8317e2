"""Pure statistics core (no Django): agreement, ratings conversion, rankings, correlations.

See ``docs/statistics.md`` for formulas, sources and conventions.
"""

from evaluators.stats.agreement import COEFFICIENT_KEYS, agreement, agreement_from_wide
from evaluators.stats.coding import WEIGHT_SCHEMES, derive_categories, long_to_wide, weight_matrix
from evaluators.stats.coefficients import cohen_kappa, pairwise_cohen_kappa
from evaluators.stats.correlation import (
    bootstrap_mean_ci,
    compare_correlations,
    contrapro_accuracy,
    correlation,
    dip_scores,
    paired_t_test,
    system_means,
    williams_test,
    wmt_kendall_tau,
)
from evaluators.stats.ranking import (
    bootstrap_ci,
    bradley_terry,
    expected_wins,
    pairwise_table,
    sign_test,
    system_ranking,
)
from evaluators.stats.ratings import (
    JUDGMENT_COLUMNS,
    choice_to_labels,
    choice_to_pairs,
    judgment_to_labels,
    multilabel_category,
    ranking_to_pairs,
    validate_judgments,
)

__all__ = [
    "COEFFICIENT_KEYS",
    "WEIGHT_SCHEMES",
    "agreement",
    "agreement_from_wide",
    "cohen_kappa",
    "derive_categories",
    "long_to_wide",
    "pairwise_cohen_kappa",
    "weight_matrix",
    "JUDGMENT_COLUMNS",
    "choice_to_labels",
    "choice_to_pairs",
    "judgment_to_labels",
    "multilabel_category",
    "ranking_to_pairs",
    "validate_judgments",
    "bootstrap_ci",
    "bradley_terry",
    "expected_wins",
    "pairwise_table",
    "sign_test",
    "system_ranking",
    "bootstrap_mean_ci",
    "compare_correlations",
    "contrapro_accuracy",
    "correlation",
    "dip_scores",
    "paired_t_test",
    "system_means",
    "williams_test",
    "wmt_kendall_tau",
]
