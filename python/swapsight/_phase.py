"""phase(), mark() and end_phase(): the pipeline's side of the mark channel.

The recorder knows one phase at a time: the last line written to
$SWAPSIGHT_MARK starts a phase ("NAME") or ends the current one ("/" or
"/NAME"). Nested phases are written as their path: entering "unet" inside
"load" writes "load/unet", leaving it writes "load" again (the outer phase
resumes), leaving "load" writes "/load". Each thread and each asyncio task has
its own path (a contextvars.ContextVar); since the recorder shows one phase,
the last line written by any of them is the phase the trace shows.
"""

import contextvars
import functools
import inspect
from types import TracebackType
from typing import TYPE_CHECKING, Any, Callable, Literal, Optional, Tuple, Type, TypeVar, overload

from ._names import _PREFIX, cached_clean, cached_clean_text, clean_name, clean_text
from ._writer import _warn_once, mark_path, warn_once, write_line

#: A phase entered in this context: the phase, its path as the names joined
#: ("load/unet", cut where the cleaning stops reading), and that path cleaned,
#: the line that marks it. Kept so that entering and leaving clean nothing.
_Entry = Tuple["Phase", str, str]
# The phases entered in this context, outermost first.
_STACK: "contextvars.ContextVar[Tuple[_Entry, ...]]" = contextvars.ContextVar(
    "swapsight_phases", default=()
)
_F = TypeVar("_F", bound=Callable[..., Any])


def _joined(parent: str, name: str) -> Tuple[str, str]:
    """``parent/name`` and that path cleaned (cached). The path starts with
    a clean name, no blank, so the cleaning reads only its first _PREFIX
    characters: the rest is cut here, and a deep recursion's paths stay
    short."""
    raw = parent + "/" + name
    if len(raw) > _PREFIX:
        raw = raw[:_PREFIX]
    return raw, cached_clean_text(raw)


def _entry(stack: "Tuple[_Entry, ...]", p: "Phase") -> _Entry:
    """``p`` entered on top of ``stack``."""
    name = p._name or p.name
    if not stack:
        return (p, name, name)  # a clean name is its own clean path
    return (p,) + _joined(stack[-1][1], name)


def _no_phase(what: str, name: object) -> None:
    """Logs once why ``name``, cleaned to nothing a phase may be named,
    names no phase."""
    try:
        text = clean_text(name)
    except Exception:  # a str() that raises
        text = ""
    # A mistake in one name, not in the mark file: the other phases are
    # marked, and a later problem with the file is still said.
    if text:
        warn_once(
            "phase-name-line",
            "swapsight: %s %r: a phase name cannot start with '/' or '#counter ' "
            "(the recorder reads such a line as the end of a phase or a counter)",
            what,
            name,
        )
    else:
        warn_once("phase-name-blank", "swapsight: %s %r: the name is blank", what, name)


class Phase:
    """A phase of the pipeline: ``with phase("denoise"):`` or
    ``@phase("denoise")`` on a function, coroutine function, generator
    function or async generator function (a bare ``@phase`` names the phase
    after the function's ``__qualname__``, without ``<locals>`` parts).

    Without a running recording (no ``$SWAPSIGHT_MARK``) entering and leaving
    cost well under a microsecond and do nothing. Never raises.
    """

    __slots__ = ("_raw", "_name")

    def __new__(cls, name: Any) -> Any:
        # A bare @phase on a function: the phase is named after it.
        if callable(name) and not isinstance(name, (str, bytes, Phase)):
            fn = name
            label = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "?")
            label = str(label).rpartition("<locals>.")[2]
            return cls(label)(fn)
        return object.__new__(cls)

    def __init__(self, name: Any) -> None:
        # Cleaned when first needed: without a recorder, never.
        self._raw = name
        self._name: Optional[str] = None

    @property
    def name(self) -> str:
        """The name as the trace shows it ("?" when nothing was left)."""
        if self._name is None:
            try:
                raw = self._raw
                cleaned = cached_clean(raw) if type(raw) is str else clean_name(raw)
            except Exception:  # a str() that raises
                cleaned = ""
            if not cleaned:
                _no_phase("phase", raw)
            self._name = cleaned or "?"
        return self._name

    def __repr__(self) -> str:
        return "swapsight.phase(%r)" % (self.name,)

    def __enter__(self) -> "Phase":
        path = mark_path()
        if not path:
            return self
        try:
            stack = _STACK.get()
            entry = _entry(stack, self)
            _STACK.set(stack + (entry,))
            write_line(path, entry[2])
        except Exception as e:
            _warn_once("swapsight: phase %r not marked: %r", self.name, e)
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> Literal[False]:
        stack = _STACK.get()
        if not stack:
            return False
        try:
            left = stack[:-1] if stack[-1][0] is self else _left(stack, self)
            if left is None:
                return False  # entered in another context: nothing to undo
            stack = left
            _STACK.set(stack)
            path = mark_path()
            if path:
                write_line(path, stack[-1][2] if stack else "/" + (self._name or self.name))
        except Exception as e:
            _warn_once("swapsight: the end of phase %r not marked: %r", self.name, e)
        return False

    def __call__(self, fn: _F) -> _F:
        """As a decorator: each call of ``fn`` runs inside this phase."""
        wrapper: Callable[..., Any]
        if inspect.isasyncgenfunction(fn):

            async def agen(*args: Any, **kwargs: Any) -> Any:
                with self:
                    async for item in fn(*args, **kwargs):
                        yield item

            wrapper = agen
        elif inspect.iscoroutinefunction(fn):

            async def coro(*args: Any, **kwargs: Any) -> Any:
                with self:
                    return await fn(*args, **kwargs)

            wrapper = coro
        elif inspect.isgeneratorfunction(fn):

            def gen(*args: Any, **kwargs: Any) -> Any:
                with self:
                    return (yield from fn(*args, **kwargs))

            wrapper = gen
        else:

            def call(*args: Any, **kwargs: Any) -> Any:
                with self:
                    return fn(*args, **kwargs)

            wrapper = call
        return functools.wraps(fn)(wrapper)  # type: ignore[return-value]


if TYPE_CHECKING:
    # What type checkers see: mypy takes a class's call to give an instance
    # whatever __new__ says, so a bare @phase, which gives the function back,
    # is typed through a function's overloads. At run time phase is the class.
    @overload
    def phase(name: _F) -> _F: ...  # type: ignore[overload-overlap]

    @overload
    def phase(name: object) -> Phase: ...

    def phase(name: object) -> Any:
        """A phase of the pipeline (:class:`Phase`), or with a function as
        ``name`` (a bare ``@phase``) that function, wrapped."""

else:
    phase = Phase


def _left(stack: "Tuple[_Entry, ...]", p: Phase) -> "Optional[Tuple[_Entry, ...]]":
    """``stack`` without ``p``'s innermost entry (a recursive function enters
    the same phase again), or None when ``p`` is not in it. What was entered
    after it and not left (a suspended generator's phase) stays, its paths
    joined again without ``p``."""
    for i in range(len(stack) - 1, -1, -1):
        if stack[i][0] is p:
            out = stack[:i]
            for entry in stack[i + 1 :]:
                out += (_entry(out, entry[0]),)
            return out
    return None


def mark(name: object) -> None:
    """Starts phase ``name`` now, until the next mark, ``end_phase()`` or the
    end of the enclosing ``phase`` (inside one it is written as its path,
    ``load/NAME``). A blank name, or one the recorder would read as another
    line (``/etc``, ``#counter …``), is not marked. Never raises."""
    path = mark_path()
    if not path:
        return
    try:
        cleaned = cached_clean(name) if type(name) is str else clean_name(name)
        if not cleaned:
            _no_phase("mark", name)
            return
        stack = _STACK.get()
        write_line(path, _joined(stack[-1][1], cleaned)[1] if stack else cleaned)
    except Exception as e:
        _warn_once("swapsight: mark not written: %r", e)


def end_phase() -> None:
    """Ends the phase started by ``mark()``: inside a ``phase`` the enclosing
    phase resumes, outside any the trace has no phase until the next mark.
    Never raises."""
    path = mark_path()
    if not path:
        return
    try:
        stack = _STACK.get()
        write_line(path, stack[-1][2] if stack else "/")
    except Exception as e:
        _warn_once("swapsight: end of phase not written: %r", e)
