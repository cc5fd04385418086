"""A small reader of the DOM Chromium dumps: every element with its tag, classes and text."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass
class Element:
    tag: str
    classes: frozenset[str]
    attrs: dict[str, str]
    text: str = ""
    children: list[Element] = field(default_factory=list)

    def find_all(self, tag: str, css_class: str | None = None) -> list[Element]:
        found = [self] if self.tag == tag and (css_class is None or css_class in self.classes) else []
        for child in self.children:
            found.extend(child.find_all(tag, css_class))
        return found

    def section(self, element_id: str) -> Element:
        for element in self.walk():
            if element.attrs.get("id") == element_id:
                return element
        raise AssertionError(f"no element with id {element_id!r} in the DOM")

    def walk(self) -> list[Element]:
        out = [self]
        for child in self.children:
            out.extend(child.walk())
        return out


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", frozenset(), {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        element = Element(tag, frozenset(values.get("class", "").split()), values)
        self.stack[-1].children.append(element)
        if tag not in VOID:
            self.stack.append(element)

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        for element in self.stack:
            element.text += data


def parse_dom(markup: str) -> Element:
    builder = _Builder()
    builder.feed(markup)
    builder.close()
    return builder.root
