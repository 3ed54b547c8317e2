"""MQM: error spans with a category and a severity per candidate (Lommel et al. 2014; Freitag et al. 2021)."""
