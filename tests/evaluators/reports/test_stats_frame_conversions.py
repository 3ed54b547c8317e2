"""The stats frame's conversions equal what ``Series.map`` gives (values, types and dtype), on typed columns (a stored
study's export) and on text (an export file read back)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evaluators.reports.study_stats import _as_bool, _blank, _blank_to_none

SERIES = [
    pd.Series([1, None, 3]),
    pd.Series([1, 2, 3]),
    pd.Series([1.5, np.nan, 2.0]),
    pd.Series([True, False, True]),
    pd.Series([True, None, False], dtype=object),
    pd.Series([" a ", "", "  ", None, "b"]),
    pd.Series(["x", pd.NA, np.nan, 4, 2.5]),
    pd.Series([None, None]),
    pd.Series(['[{"start":0,"end":3}]', None, "[]"], name="spans", index=[5, 7, 9]),
    pd.Series([], dtype=object),
    pd.Series([" a", "a", "a ", None, "", "a", "  ", "b"], dtype=object),  # text and None: each distinct text once
    pd.Series([3, None, 3, 0, -2], dtype=object),  # whole numbers and None: kept as they are
    pd.Series([1, True, None, 0, False], dtype=object),  # bools among numbers: value by value
    pd.Series(["1", 1, None], dtype=object),
]


@pytest.mark.parametrize("series", SERIES)
def test_blank_to_none_is_series_map(series: pd.Series) -> None:
    expected = series.astype(object).map(_blank)
    got = _blank_to_none(series)
    assert got.dtype == expected.dtype and got.name == expected.name and got.index.equals(expected.index)
    assert [type(v) for v in got] == [type(v) for v in expected]
    assert got.equals(expected)


@pytest.mark.parametrize("series", [pd.Series([True, False]), pd.Series(["true", "0", "", None, "Yes"]),
                                    pd.Series([1, 0])])
def test_as_bool_of_bools_strings_and_numbers(series: pd.Series) -> None:
    got = _as_bool(series, "flag", "file")
    assert got.dtype == bool and got.index.equals(series.index)
    assert list(got) == [bool(v) if not isinstance(v, str) else v.strip().lower() in {"true", "1", "yes"}
                         for v in series.where(series.notna(), False)]
