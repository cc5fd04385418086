"""GBNF (llama.cpp's grammar format) text helpers and a pure-Python reader for it.

* :func:`gbnf_literal`, :func:`gbnf_char_class`: escape text for a GBNF string
  literal or character class (every byte a model may produce is expressible).
* :func:`python_string_literal`: the canonical Python spelling of a string in
  the given quote kind (what a model writes for a column name).
* :func:`identifier_except`: rules for identifiers that are NOT one of a few
  reserved words (GBNF has no negative look-ahead, so the complement is spelled
  out over the words' trie).
* :func:`parse_gbnf` checks a grammar's text (syntax, every referenced rule
  defined, a ``root``) and returns its rules; :func:`gbnf_accepts` tells whether
  a text is in the grammar's language (an Earley recogniser over characters, for
  tests and offline checks — llama.cpp itself does the constrained decoding).

The dialect is llama.cpp's ``grammars/README.md``: ``name ::= alternatives``,
``"literal"`` with ``\\n \\r \\t \\\\ \\" \\xHH \\uHHHH`` escapes, ``[...]``/``[^...]``
classes with ranges, ``( )``, ``* + ?`` and ``{m}``/``{m,}``/``{m,n}``, ``#`` comments.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["GbnfError", "Grammar", "gbnf_accepts", "gbnf_char_class", "gbnf_literal", "identifier_except",
           "parse_gbnf", "python_string_literal"]


class GbnfError(ValueError):
    """A grammar text that llama.cpp would refuse (the message says where and what)."""


_LITERAL_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_CLASS_ESCAPES = {"\\": "\\\\", "]": "\\]", "[": "\\[", "-": "\\-", "^": "\\x5E", "\n": "\\n", "\r": "\\r", "\t": "\\t",
                  '"': '\\"'}


def _escape_char(ch: str, table: dict[str, str]) -> str:
    if ch in table:
        return table[ch]
    code = ord(ch)
    if code < 0x20 or code == 0x7F:
        return f"\\x{code:02X}"
    if 0xD800 <= code <= 0xDFFF:  # a lone surrogate is no UTF-8 character: refuse rather than mis-encode
        raise GbnfError(f"text contains the lone surrogate U+{code:04X}, which no model output can contain")
    return ch


def gbnf_literal(text: str) -> str:
    """``text`` as a GBNF string literal (quoted). Non-ASCII characters are kept as UTF-8."""
    if not text:
        raise GbnfError("a GBNF literal cannot be empty; use an optional group instead")
    return '"' + "".join(_escape_char(ch, _LITERAL_ESCAPES) for ch in text) + '"'


def gbnf_char_class(chars: Iterable[str], *, negate: bool = False) -> str:
    """A GBNF character class matching any one of ``chars`` (or, negated, any other character)."""
    unique = sorted(set(chars))
    if not unique or any(len(c) != 1 for c in unique):
        raise GbnfError("a character class needs one or more single characters")
    parts = []
    i = 0
    while i < len(unique):  # runs of three or more consecutive characters become ranges
        j = i
        while j + 1 < len(unique) and ord(unique[j + 1]) == ord(unique[j]) + 1:
            j += 1
        if j - i >= 2:
            parts.append(_escape_char(unique[i], _CLASS_ESCAPES) + "-" + _escape_char(unique[j], _CLASS_ESCAPES))
        else:
            parts.extend(_escape_char(c, _CLASS_ESCAPES) for c in unique[i:j + 1])
        i = j + 1
    return "[" + ("^" if negate else "") + "".join(parts) + "]"


def python_string_literal(text: str, quote: str) -> str:
    """How Python source spells ``text`` between ``quote`` characters (``"`` or ``'``):
    backslash, the quote and control characters escaped, everything else as it is."""
    if quote not in ('"', "'"):
        raise ValueError(f"quote must be ' or \", got {quote!r}")
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == quote:
            out.append("\\" + quote)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return quote + "".join(out) + quote


IDENT_START = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"
IDENT_CHARS = IDENT_START + "0123456789"
_IDENT_REST = "[a-zA-Z0-9_]"


def identifier_except(name: str, words: Sequence[str]) -> list[str]:
    """GBNF rules (``name ::= ...`` first) matching every Python-style ASCII identifier except ``words``.

    Built over the trie of ``words``: at each trie node an identifier either stops (unless
    the node is a word), or continues with a character that leaves the trie (then any
    rest), or follows a trie edge.
    """
    for word in words:
        if not word or word[0] not in IDENT_START or any(c not in IDENT_CHARS for c in word):
            raise GbnfError(f"{word!r} is not an ASCII identifier")
    trie: dict = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}
    rules: list[str] = []
    counter = [0]

    def node_rule(node: dict, rule: str, allowed: str) -> None:
        edges = sorted(k for k in node if k)
        alts = []
        others = [c for c in allowed if c not in edges]
        if others:
            alts.append(f"{gbnf_char_class(others)} {_IDENT_REST}*")
        for ch in edges:
            counter[0] += 1
            child = f"{name}-{counter[0]}"
            alts.append(f"{gbnf_literal(ch)} {child}")
            node_rule(node[ch], child, IDENT_CHARS)
        if rule != name and "" not in node:
            alts.append('""')  # a proper prefix of a reserved word is itself an identifier
        rules.append(f"{rule} ::= " + " | ".join(alts))

    node_rule(trie, name, IDENT_START)
    rules.sort(key=lambda r: r.split(" ::=")[0] != name)
    return rules


# --------------------------------------------------------------------------- parsing

@dataclass(frozen=True)
class Chars:
    """One character from ``ranges`` (inclusive code point pairs), or outside them when ``negate``."""

    ranges: tuple[tuple[int, int], ...]
    negate: bool

    def matches(self, ch: str) -> bool:
        code = ord(ch)
        inside = any(lo <= code <= hi for lo, hi in self.ranges)
        return inside != self.negate


#: a symbol: a rule name (str) or a character set
Symbol = str | Chars


@dataclass
class Grammar:
    """Rules as alternatives of symbol sequences; repetitions and groups become generated rules."""

    rules: dict[str, list[list[Symbol]]]
    root: str = "root"


_NAME = re.compile(r"[a-zA-Z0-9-]+")


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.rules: dict[str, list[list[Symbol]]] = {}
        self.defined: set[str] = set()
        self.referenced: dict[str, int] = {}
        self.generated = 0

    def error(self, message: str, pos: int | None = None) -> GbnfError:
        pos = self.pos if pos is None else pos
        line = self.text.count("\n", 0, pos) + 1
        col = pos - (self.text.rfind("\n", 0, pos) + 1) + 1
        return GbnfError(f"GBNF line {line} column {col}: {message}")

    def skip(self, newlines: bool) -> None:
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if ch == "#":
                while self.pos < len(self.text) and self.text[self.pos] != "\n":
                    self.pos += 1
            elif ch in " \t" or (newlines and ch in "\r\n"):
                self.pos += 1
            else:
                break

    def parse(self) -> Grammar:
        self.skip(True)
        while self.pos < len(self.text):
            match = _NAME.match(self.text, self.pos)
            if not match:
                raise self.error("expected a rule name")
            name = match.group()
            self.pos = match.end()
            self.skip(False)
            if not self.text.startswith("::=", self.pos):
                raise self.error(f"expected ::= after rule name {name!r}")
            self.pos += 3
            self.skip(True)
            if name in self.defined:
                raise self.error(f"rule {name!r} is defined twice")
            self.defined.add(name)
            self.rules[name] = self.alternatives(nested=False)
            if self.pos < len(self.text) and self.text[self.pos] not in "\r\n":
                raise self.error(f"unexpected {self.text[self.pos]!r} in rule {name!r}")
            self.skip(True)
        if "root" not in self.rules:
            raise GbnfError("the grammar has no root rule")
        for name, pos in self.referenced.items():
            if name not in self.rules:
                raise self.error(f"rule {name!r} is used but never defined", pos)
        return Grammar(self.rules)

    def alternatives(self, nested: bool) -> list[list[Symbol]]:
        alts = [self.sequence(nested)]
        while self.pos < len(self.text) and self.text[self.pos] == "|":
            self.pos += 1
            self.skip(True)
            alts.append(self.sequence(nested))
        return alts

    def new_rule(self, alts: list[list[Symbol]]) -> str:
        self.generated += 1
        name = f"__gen{self.generated}"
        self.rules[name] = alts
        return name

    def sequence(self, nested: bool) -> list[Symbol]:
        seq: list[Symbol] = []
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            last: list[Symbol]
            if ch == '"':
                self.pos += 1
                last = []
                while True:
                    if self.pos >= len(self.text) or self.text[self.pos] in "\r\n":
                        raise self.error("unterminated string literal")
                    if self.text[self.pos] == '"':
                        self.pos += 1
                        break
                    code = self.char()
                    last.append(Chars(((code, code),), False))
            elif ch == "[":
                self.pos += 1
                negate = self.text.startswith("^", self.pos)
                self.pos += negate
                ranges = []
                while True:
                    if self.pos >= len(self.text) or self.text[self.pos] in "\r\n":
                        raise self.error("unterminated character class")
                    if self.text[self.pos] == "]":
                        self.pos += 1
                        break
                    lo = self.char()
                    hi = lo
                    if self.text.startswith("-", self.pos) and not self.text.startswith("-]", self.pos):
                        self.pos += 1
                        hi = self.char()
                        if hi < lo:
                            raise self.error("a character range goes backwards")
                    ranges.append((lo, hi))
                last = [Chars(tuple(ranges), negate)]
            elif ch == "(":
                self.pos += 1
                self.skip(True)
                alts = self.alternatives(nested=True)
                if not self.text.startswith(")", self.pos):
                    raise self.error("expected )")
                self.pos += 1
                last = [self.new_rule(alts)]
            elif _NAME.match(ch):
                match = _NAME.match(self.text, self.pos)
                assert match
                after = self.pos
                self.pos = match.end()
                probe = self.pos
                while probe < len(self.text) and self.text[probe] in " \t":
                    probe += 1
                if self.text.startswith("::=", probe):  # the next rule starts: this sequence ended
                    self.pos = after
                    return seq
                self.referenced.setdefault(match.group(), after)
                last = [match.group()]
            elif ch == ".":  # any character
                self.pos += 1
                last = [Chars((), True)]
            else:
                break
            self.skip(nested)
            seq.extend(self.repeat(last))
            self.skip(nested)
        return seq

    def repeat(self, item: list[Symbol]) -> list[Symbol]:
        if self.pos >= len(self.text):
            return item
        ch = self.text[self.pos]
        if ch not in "*+?{":
            return item
        if ch == "{":
            match = re.compile(r"\{\s*(\d+)\s*(?:(,)\s*(\d*)\s*)?\}").match(self.text, self.pos)
            if not match:
                raise self.error("malformed {m,n} repetition")
            self.pos = match.end()
            lo = int(match.group(1))
            hi = lo if match.group(2) is None else (int(match.group(3)) if match.group(3) else None)
            if hi is not None and hi < lo:
                raise self.error("{m,n} with n < m")
        else:
            self.pos += 1
            lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[ch]
        self.skip(False)
        return self.expand(item, lo, hi)

    def expand(self, item: list[Symbol], lo: int, hi: int | None) -> list[Symbol]:
        out: list[Symbol] = []
        for _ in range(lo):
            out.extend(item)
        if hi is None:
            star = f"__gen{self.generated + 1}"
            self.generated += 1
            self.rules[star] = [[], [*item, star]]
            out.append(star)
        else:
            for _ in range(hi - lo):
                out.append(self.new_rule([[], list(item)]))
        return out

    def char(self) -> int:
        text = self.text
        if text[self.pos] != "\\":
            ch = text[self.pos]
            self.pos += 1
            return ord(ch)
        if self.pos + 1 >= len(text):
            raise self.error("a backslash at the end of the grammar")
        esc = text[self.pos + 1]
        simple = {"n": 10, "r": 13, "t": 9, "\\": 92, '"': 34, "[": 91, "]": 93, "-": 45}  # llama.cpp has no \\^
        if esc in simple:
            self.pos += 2
            return simple[esc]
        widths = {"x": 2, "u": 4, "U": 8}
        if esc in widths:
            digits = text[self.pos + 2: self.pos + 2 + widths[esc]]
            if len(digits) != widths[esc] or not re.fullmatch(r"[0-9a-fA-F]+", digits):
                raise self.error(f"\\{esc} needs {widths[esc]} hex digits")
            self.pos += 2 + widths[esc]
            return int(digits, 16)
        raise self.error(f"unknown escape \\{esc}")


def parse_gbnf(text: str) -> Grammar:
    """Check a GBNF grammar's text and return its rules; :class:`GbnfError` says what is wrong and where."""
    return _Parser(text).parse()


def gbnf_accepts(grammar: Grammar | str, text: str) -> bool:
    """True when the whole of ``text`` is in the language of ``grammar``'s root rule (Earley, by character)."""
    g = parse_gbnf(grammar) if isinstance(grammar, str) else grammar
    rules = g.rules
    # an item: (rule, alternative index, dot, origin)
    Item = tuple[str, int, int, int]
    sets: list[set[Item]] = [set() for _ in range(len(text) + 1)]
    nullable = _nullable(rules)
    sets[0].update((g.root, i, 0, 0) for i in range(len(rules[g.root])))
    for k in range(len(text) + 1):
        agenda = list(sets[k])
        while agenda:
            rule, alt, dot, origin = agenda.pop()
            seq = rules[rule][alt]
            if dot < len(seq):
                sym = seq[dot]
                if isinstance(sym, str):
                    for i in range(len(rules[sym])):
                        item = (sym, i, 0, k)
                        if item not in sets[k]:
                            sets[k].add(item)
                            agenda.append(item)
                    if sym in nullable:
                        item = (rule, alt, dot + 1, origin)
                        if item not in sets[k]:
                            sets[k].add(item)
                            agenda.append(item)
                elif k < len(text) and sym.matches(text[k]):
                    sets[k + 1].add((rule, alt, dot + 1, origin))
            else:
                for prule, palt, pdot, porigin in list(sets[origin]):
                    pseq = rules[prule][palt]
                    if pdot < len(pseq) and pseq[pdot] == rule:
                        item = (prule, palt, pdot + 1, porigin)
                        if item not in sets[k]:
                            sets[k].add(item)
                            agenda.append(item)
        if k < len(text) and not sets[k + 1]:
            return False
    return any(r == g.root and d == len(rules[r][a]) and o == 0 for r, a, d, o in sets[len(text)])


def _nullable(rules: dict[str, list[list[Symbol]]]) -> set[str]:
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, alts in rules.items():
            if name not in found and any(all(isinstance(s, str) and s in found for s in alt) for alt in alts):
                found.add(name)
                changed = True
    return found
