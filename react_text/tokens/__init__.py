"""The token account, one owner: the meter (what was billed, counted offline), the history as sent,
the plan (allowances, the forced call's reserve, elision) and the truncation of observations."""

__all__: list[str] = []
