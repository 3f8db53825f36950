"""The inline walk's quick test of a run of words decides as the exact pattern does."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from paperanchor.parse.inline import _PLAIN_RUN, _plain

# marks, brackets and debris characters among words, in runs shorter and longer than the length
# from which escape.may_need_escape asks character by character
_LONG_RUN = 48
_RUNS = st.text(alphabet="\\`*~$<&_@[]()^ab1 \u00e9", max_size=3 * _LONG_RUN)


@settings(max_examples=3000, deadline=None)
@given(_RUNS)
@example("a" * _LONG_RUN + "[12]")
@example("a" * _LONG_RUN + "](x)")
@example("a" * (_LONG_RUN - 1) + "_")
def test_a_run_is_plain_exactly_when_no_escape_or_debris_rule_matches_it(run: str) -> None:
    assert _plain(run) == (_PLAIN_RUN.search(run) is None)
