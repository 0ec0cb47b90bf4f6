"""A small Wadler-Lindig pretty printer: documents of text, breaks, groups and nesting.

Jaxprs are printed through it so that their line breaking matches JAX's: a group is laid out
flat (its breaks as spaces) when its whole flat form fits in what is left of the line, and
otherwise its own breaks become newlines while its inner groups decide again for themselves.
"""


class Doc:
    """A document; `+` concatenates, `format(width)` lays it out."""

    __slots__ = ()

    def __add__(self, other):
        return Concat([self, other])

    def format(self, width=80):
        return _format(self, width)

    def __str__(self):
        return self.format()


class Text(Doc):
    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text


class Concat(Doc):
    __slots__ = ("children",)

    def __init__(self, children):
        self.children = list(children)


class Break(Doc):
    """A newline in a broken group, `text` in a flat one."""

    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text


class Group(Doc):
    __slots__ = ("child",)

    def __init__(self, child):
        self.child = child


class Nest(Doc):
    __slots__ = ("n", "child")

    def __init__(self, n, child):
        self.n = n
        self.child = child


NIL = Concat(())


def text(s):
    return Text(s)


def concat(docs):
    return Concat(docs)


def brk(s=" "):
    return Break(s)


def group(doc):
    return Group(doc)


def nest(n, doc):
    return Nest(n, doc)


def join(sep, docs):
    """docs with sep between each pair."""
    docs = list(docs)
    if not docs:
        return NIL
    out = [docs[0]]
    for d in docs[1:]:
        out.append(sep)
        out.append(d)
    return Concat(out)


_FLAT, _BREAK = 0, 1


def _fits(doc, room):
    """Whether doc laid out flat takes at most `room` columns."""
    todo = [doc]
    while todo:
        d = todo.pop()
        t = type(d)
        if t is Text or t is Break:
            room -= len(d.text)
            if room < 0:
                return False
        elif t is Concat:
            todo.extend(reversed(d.children))
        else:  # Group, Nest: flat layout ignores both
            todo.append(d.child)
    return True


def _format(doc, width):
    out = []
    col = 0
    todo = [(0, _BREAK, doc)]
    while todo:
        indent, mode, d = todo.pop()
        t = type(d)
        if t is Text:
            out.append(d.text)
            col += len(d.text)
        elif t is Concat:
            todo.extend((indent, mode, c) for c in reversed(d.children))
        elif t is Break:
            if mode == _FLAT:
                out.append(d.text)
                col += len(d.text)
            else:
                out.append("\n" + " " * indent)
                col = indent
        elif t is Group:
            flat = mode == _FLAT or _fits(d.child, width - col)
            todo.append((indent, _FLAT if flat else _BREAK, d.child))
        else:  # Nest
            todo.append((indent + d.n, mode, d.child))
    return "".join(out)
