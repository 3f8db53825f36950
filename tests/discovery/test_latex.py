"""Our escaping rules for BibTeX values: text as it prints, math kept, case kept, nothing run."""

from __future__ import annotations

import pytest

from paperanchor.discovery.latex import MAX_FIELD_CHARS, ascii_fold, plain, tex, words


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("Promises & Perils", "Promises \\& Perils"),
        ("100% of x_y in #3", "100\\% of x\\_y in \\#3"),
        ("already \\& escaped \\% \\_", "already \\& escaped \\% \\_"),
        ("~1 cm/s", "{\\textasciitilde}1 cm/s"),
        ("a^b < c > d | e", "a{\\textasciicircum}b {$<$} c {$>$} d {$|$} e"),
        ("back\\slash", "back{\\textbackslash}slash"),
        ("\\emph{Testing}", "{\\textbackslash}emphTesting"),
        ("{Grouping} braces", "Grouping braces"),
        ("\\{literal\\} braces", "{\\textbraceleft}literal{\\textbraceright} braces"),
    ],
)
def test_latex_specials_outside_math_are_escaped(text: str, written: str) -> None:
    assert tex(text, protect=False).value == written


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("$I$-$V$ characteristics", "{$I$}-{$V$} characteristics"),
        ("$$x^2$$ and \\(y_1\\)", "{$x^2$} and {$y_1$}"),
        ("$\\frac{1}{2}\\leq\\alpha$", "{$\\frac{1}{2}\\leq\\alpha$}"),
        ("$\\{x \\mid x>0\\}$", "{$\\{x \\mid x>0\\}$}"),
        ("a lone $ sign", "a lone \\$ sign"),
    ],
)
def test_math_is_kept_and_braced_so_styles_leave_it_alone(text: str, written: str) -> None:
    assert tex(text).value == written


def test_amsmath_commands_are_kept_and_reported_for_a_preamble_fallback() -> None:
    result = tex("Maps on $\\mathbb{R}^n$ and $\\text{KL}$")
    assert result.value == "Maps on {$\\mathbb{R}^n$} and {$\\text{KL}$}"
    assert result.needs == {"mathbb", "text"}


@pytest.mark.parametrize(
    "formula",
    [
        "$\\input{/etc/passwd}$",
        "$\\immediate\\write18{touch pwned}$",
        "$^^5cinput$",  # TeX reads ^^5c as a backslash
        "$x % comment$",
        "$a & b$",
        "$#1$",
        "$\\frac{1}{2$",
        "$x}{$",
        "$x^$",
        "$\\frac12}$",
        "$\\left( x$",
        "$\\text{a_b}$",
        "$\\def\\x{y}$",
        "$\\\\$",
    ],
)
def test_a_formula_with_anything_off_the_whitelist_becomes_escaped_text(formula: str) -> None:
    value = tex(formula).value
    assert not value.startswith("{$")
    assert value.startswith("\\$") and value.endswith("\\$")
    assert "\\input" not in value and "\\write" not in value and "\\def" not in value


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ('Landauer-B\\"uttiker', 'Landauer-B{\\"u}ttiker'),
        ("\\'{e}t\\'e {\\'e}t\\'e", "{\\'e}t{\\'e} {\\'e}t{\\'e}"),
        ("\\c c \\v{c} \\ss{} x \\o \\aa", "{\\c{c}} {\\v{c}} {\\ss} x {\\o}{\\aa}"),
        ("Pascal Meißner", "Pascal Mei{\\ss}ner"),
        ("Ramírez", "Ram{\\'\\i}rez"),
        ("Łukasz", "{\\L}ukasz"),
        ("Nguyễn", "Nguy{\\~{\\^e}}n"),
        ("Dębski", "D{[U+0119]}bski"),  # ogonek: pdflatex's default OT1 has none
        ("中文 😀", "{[U+4E2D]}{[U+6587]} {[U+1F600]}"),
        ("≤ α µ °C", "{$\\leq$} {$\\alpha$} {$\\mu$} {$^\\circ$}C"),
        ("“quoted” – dash — … •", "``quoted'' -- dash --- {\\ldots} {\\textbullet}"),
    ],
)
def test_accents_and_unicode_become_pure_ascii_latex(text: str, written: str) -> None:
    assert tex(text, protect=False).value == written


@pytest.mark.parametrize(
    ("title", "written"),
    [
        ("OGLE-III Transit Surveys", "{OGLE}-{III} Transit Surveys"),
        # BibTeX itself keeps the first letter and a capital after ": "
        ("ComicScene154: A Scene Dataset", "{ComicScene154}: A Scene Dataset"),
        ("Title:A B", "Title:{A} {B}"),
        ("Online GANs for Testing", "Online {GANs} for Testing"),
        ("ChatGPT and the iPhone", "{ChatGPT} and the {iPhone}"),
        ("A Bijective Transform: Part I", "A Bijective Transform: Part {I}"),
        ("O'Brien's LaTeX", "{O'Brien's} {LaTeX}"),
        ("Ünter ÜBER", '{\\"U}nter {{\\"U}BER}'),
        ("0", "0"),
    ],
)
def test_acronyms_camelcase_and_single_capitals_are_braced(title: str, written: str) -> None:
    assert tex(title).value == written


@pytest.mark.parametrize(
    "text",
    [
        "}}}} unbalanced {{{",
        "\\",
        "\\\\\\\\",
        "{\\",
        "$",
        "$$",
        "\\(",
        "@misc{evil, title={x}}",
        "}, note = {injected",
        "\x00\x01\x1b[31m\x7f\x85\u202e\ufeff",
        "\ud800 lone surrogate",
        "\\csname input\\endcsname{x}",
        "\\catcode`\\@=11",
        "^^5c^^5c",
    ],
)
def test_hostile_text_gives_ascii_with_balanced_braces_and_no_command_of_its_own(
    text: str,
) -> None:
    value = tex(text).value
    assert value.isascii()
    depth = 0
    for char in value:
        depth += (char == "{") - (char == "}")
        assert depth >= 0
    assert depth == 0
    for command in ("\\input", "\\csname", "\\catcode", "\\write", "\\endcsname"):
        assert command not in value
    assert "^^" not in value


def test_control_and_format_characters_are_dropped() -> None:
    assert tex("a\x00b\x1b\u202ec\ufeffd\te\nf", protect=False).value == "abcd e f"


def test_a_huge_value_is_cut_at_a_word_with_an_ellipsis() -> None:
    value = tex("word " * 10_000, protect=False).value
    assert value.endswith("word{\\ldots}") and len(value) < MAX_FIELD_CHARS + 20


def test_plain_words_and_ascii_fold_read_tex_as_it_prints() -> None:
    assert plain('B\\"uttiker {BERT} $x$') == "Büttiker BERT $x$"
    assert words('$\\omega$Test: A B\\"uttiker 0') == ["Test", "A", "Büttiker", "0"]
    assert [ascii_fold(n) for n in ("Meißner", "Ramírez", 'B\\"uttiker', "Łukasz", "Øster")] == [
        "meissner",
        "ramirez",
        "buttiker",
        "lukasz",
        "oster",
    ]


@pytest.mark.parametrize(
    "text",
    ["\\(" * 5000, "$$" + " $a" * 3000, "$" + "\\x" * 4999, "a" + "$x^{" * 2400, '\\"' * 5000],
)
def test_unpaired_delimiters_cost_linear_time(text: str) -> None:
    import time

    started = time.monotonic()
    assert tex(text).value.isascii()
    # loose: about 0.1 s each; "\\(" * 5000 took 45 s before unfound closers were remembered
    assert time.monotonic() - started < 5


def test_a_parenthesised_formula_that_cannot_be_kept_is_its_text_as_written() -> None:
    assert (
        tex("\\(\\input x\\)").value
        == "{\\textbackslash}({\\textbackslash}input x{\\textbackslash})"
    )
