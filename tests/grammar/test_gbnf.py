"""GBNF text helpers: escaping for Python and GBNF, identifier complements, the well-formedness check."""

from __future__ import annotations

import ast
import re

import pytest

from binder_py.grammar.gbnf import (GbnfError, gbnf_accepts, gbnf_char_class, gbnf_literal, identifier_except,
                                    parse_gbnf, python_string_literal)

NAMES = ["plain", "with space", 'dq"', "sq'", "both'\"", "back\\slash", "trailing\\", "Größe", "日本", "2010",
         "class", "tab\tnew\nline", "ctl\x01\x7f", "emoji 😀", "[x]", "a^b", "-"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("quote", ['"', "'"])
def test_python_literals_round_trip(name, quote):
    literal = python_string_literal(name, quote)
    assert literal[0] == literal[-1] == quote
    assert ast.literal_eval(literal) == name


@pytest.mark.parametrize("name", NAMES)
def test_gbnf_literals_match_exactly_their_text(name):
    grammar = parse_gbnf(f"root ::= {gbnf_literal(name)}\n")
    assert gbnf_accepts(grammar, name)
    assert not gbnf_accepts(grammar, name + "x")
    assert not gbnf_accepts(grammar, name[:-1])


def test_char_classes():
    special = "^-]\\[a"
    grammar = parse_gbnf("root ::= " + gbnf_char_class(special) + "+\n")
    assert gbnf_accepts(grammar, "^-]\\[a")
    assert not gbnf_accepts(grammar, "b")
    negated = parse_gbnf(f"root ::= {gbnf_char_class('ab', negate=True)}\n")
    assert gbnf_accepts(negated, "c") and not gbnf_accepts(negated, "a")
    assert gbnf_char_class("abcdez") == "[a-ez]"


def test_identifier_except():
    grammar = parse_gbnf("root ::= ident\n" + "\n".join(identifier_except("ident", ["df", "f", "f_col", "table"])))
    for word in ("d", "dfx", "x", "f_", "f_co", "f_colx", "tab", "tables", "_df", "F", "dF"):
        assert gbnf_accepts(grammar, word), word
    for word in ("df", "f", "f_col", "table", "1x", ""):
        assert not gbnf_accepts(grammar, word), word
    with pytest.raises(GbnfError, match="not an ASCII identifier"):
        identifier_except("ident", ["a-b"])


@pytest.mark.parametrize("text, message", [
    ("start ::= \"a\"\n", "no root rule"),
    ("root ::= other\n", "rule 'other' is used but never defined"),
    ("root ::= \"a\nb\"\n", "unterminated string literal"),
    ("root ::= [ab\n", "unterminated character class"),
    ("root ::= [a\\^]\n", "unknown escape"),  # llama.cpp refuses \^ too
    ("root ::= \"\\x4\"\n", "hex digits"),
    ("root ::= (\"a\" \n", "expected )"),
    ("root ::= \"a\"\nroot ::= \"b\"\n", "defined twice"),
    ("root = \"a\"\n", "expected ::="),
    ("root ::= \"a\"{3,1}\n", "n < m"),
    ("root ::= [z-a]\n", "backwards"),
])
def test_malformed_grammars_are_refused_with_where(text, message):
    with pytest.raises(GbnfError, match="line|root"):
        parse_gbnf(text)
    with pytest.raises(GbnfError, match=re.escape(message)):
        parse_gbnf(text)


def test_repetitions_groups_and_comments():
    grammar = parse_gbnf('# a comment\nroot ::= ("ab" | [0-9]){2,3} x? # trailing\nx ::= "!"+\n')
    for text in ("abab", "1ab", "12", "ab1!!", "123!"):
        assert gbnf_accepts(grammar, text), text
    for text in ("ab", "1234", "!", "ab!"):
        assert not gbnf_accepts(grammar, text), text


def test_literal_helpers_refuse_what_no_grammar_can_hold():
    with pytest.raises(GbnfError, match="cannot be empty"):
        gbnf_literal("")
    with pytest.raises(GbnfError, match="single characters"):
        gbnf_char_class([])
    with pytest.raises(ValueError, match="quote"):
        python_string_literal("x", "`")
