"""skillspec adapter kit for Python: the whole adapter protocol (PROTOCOL.md, version 2), so that
an adapter only makes the calls into its runtime.

Standard library only, Python 3.9 or later, one module: copy it next to your adapter or put its
directory on ``sys.path``. An adapter is a subclass of :class:`Runtime` handed to :func:`serve`::

    import skillspec_kit as kit          # first: it takes over stdin and stdout (see below)
    import my_runtime

    class Adapter(kit.Runtime):
        name, version = "my-runtime", my_runtime.__version__

        def start_case(self, config, root):
            self.rt = my_runtime.Host(skills_dir=config.skills_root, env=config.env)

        def discover(self):
            return [kit.loaded(s.id, s.name, s.description, s.body) for s in self.rt.rescan()]

        ...

    kit.serve(Adapter())

What the kit owns, so that an adapter cannot get it wrong:

- **The conversation.** The handshake (``start`` → ``started``; another protocol version is
  answered with ``error``), ``case_start`` / ``step`` / ``case_end`` / ``stop``, ``seq`` and
  ``index`` echoed, exactly one response line per request, in order.
- **The transport.** Requests are read as whole lines of up to :data:`MAX_REQUEST` (64 MiB)
  and must be UTF-8 JSON objects (anything else is answered with ``error``; a longer line is
  discarded as it arrives, never held, and answered with ``error``); responses are strict UTF-8
  JSON (a lone surrogate, NaN or a value JSON cannot hold becomes an ``error`` response naming
  where it was, never a broken line) and at most 16 MiB. A ``case_start`` whose ``config`` has a
  field of the wrong type is answered with ``error`` naming the field.
- **stdout and stdin.** Importing this module duplicates the real stdout and stdin for the
  protocol (close-on-exec, so no child process inherits them), points file descriptor 1 and
  ``sys.stdout`` at stderr and file descriptor 0 at ``/dev/null``. Whatever the runtime prints,
  logs or lets a child process write to its stdout lands on stderr; nothing it reads from stdin
  can swallow a request. Import the kit before the runtime so that output at import time is
  caught too. The one extra descriptor the runner leaves open (PROTOCOL.md) is left alone: not
  letting helpers inherit it is the runtime's job, and a case checks it.
- **Failures.** An exception in the adapter's or the runtime's code (``SystemExit`` included)
  becomes an ``error`` response naming the method and the exception; the traceback goes to
  stderr and the adapter goes on with the next request. A result of the wrong shape is answered
  with an ``error`` saying what was expected, before anything reaches the runner.
- **Honest defaults.** A method the adapter does not override answers ``error`` ("not
  implemented"), except :meth:`Runtime.call` (``unknown_tool``: a runtime without the tool
  offers none) and :meth:`Runtime.end_case` (nothing to release). No result is ever invented.

Error codes: :class:`ErrorMap` translates a runtime's own error messages into the codes of
SPEC.md through an explicit table whose guesses are marked, and every translated error says in
its ``message`` which rule produced it (messages are shown in reports, never compared).

**An adapter maps, it never decides** (PROTOCOL.md, "Mapping a runtime's own tools"). Every
refusal it returns comes from a signal of the runtime (an exception, a return value, a message),
and the runtime's own text travels with it: :func:`refusal` (a code), ``raise``
:class:`Refused` (the runtime refused the whole step, or to start), :meth:`ErrorMap.error`. An
adapter never checks a path, an argument or an approval itself. :class:`MappedTool` renames a
tool's arguments and results for a runtime whose tools have other names or shapes (declare the
names in :attr:`Runtime.tool_names`); :func:`timeout_ms` reads the timeout setting for a
runtime that takes it in other units.

**Dialects** (PROTOCOL.md, "Dialects"). A runtime of another rule set than portable-skills (the
open Agent Skills standard, ``agentskills``) claims it in :attr:`Runtime.dialects`, reports each
skill's ``location`` in :func:`loaded`, and, if it has a validator, answers the ``validate`` step
in :meth:`Runtime.validate` (:func:`validation`); ``config.dialect`` and
``config.user_skills_root`` are the case's dialect and user-level skills directory.
"""

from __future__ import annotations

import asyncio
import collections
import collections.abc
import inspect
import json
import math
import os
import re
import sys
import traceback
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

__all__ = [
    "PROTOCOL_VERSION",
    "DIALECTS",
    "FEATURES",
    "MAX_REQUEST",
    "MECHANISMS",
    "READ_SCOPES",
    "SKILL_FORMATS",
    "SKIP_REASONS",
    "SPEC_TOOLS",
    "AdapterError",
    "Config",
    "ErrorMap",
    "MappedTool",
    "Refused",
    "Runtime",
    "ToolMap",
    "Unmapped",
    "error",
    "installed_version",
    "loaded",
    "ok",
    "refusal",
    "rename_keys",
    "timeout_ms",
    "validation",
    "with_asked",
    "rule",
    "serve",
    "skipped",
]

PROTOCOL_VERSION = 2
"""The protocol version this kit speaks."""

MAX_LINE = 16 * 1024 * 1024
"""Longest response line the runner accepts (bytes, without the newline)."""

DEFAULT_MAX_REQUEST = 64 * 1024 * 1024


def _max_request() -> int:
    """The request line limit: ``SKILLSPEC_KIT_MAX_REQUEST`` (a number of bytes, read once at
    import) when it is set, for the kit's own tests, which check the behaviour at the limit
    without pushing 64 MiB through a pipe; :data:`DEFAULT_MAX_REQUEST` otherwise."""
    text = os.environ.get("SKILLSPEC_KIT_MAX_REQUEST")
    if text is None:
        return DEFAULT_MAX_REQUEST
    if text.isascii() and text.isdigit() and int(text) > 0:
        return int(text)
    sys.stderr.write("skillspec-kit: SKILLSPEC_KIT_MAX_REQUEST=%r is not a positive number of bytes; the limit stays %d\n" % (text, DEFAULT_MAX_REQUEST))
    return DEFAULT_MAX_REQUEST


MAX_REQUEST = _max_request()
"""Longest request line the kit takes (bytes, without the newline): 64 MiB, four times the
longest line the runner sends (16 MiB, PROTOCOL.md "Transport"). Input is read in bounded chunks
and a longer line is discarded as it streams in, never held whole, then answered with an
``error``: a runaway writer on stdin cannot make the adapter take more memory than this. Lowered
only by the kit's tests, through ``SKILLSPEC_KIT_MAX_REQUEST``."""

FEATURES = ("tool-allowlist", "skip-report", "platform-emulation", "selection", "trust", "hitl")
"""Feature names the runner knows (PROTOCOL.md); declare only what the runtime really does."""

SKIP_REASONS = (
    "duplicate",
    "symlink",
    "too_deep",
    "too_large",
    "not_regular",
    "not_utf8",
    "bad_name",
    "malformed",
    "incomplete",
    "unreadable",
)
"""Reasons a ``skipped`` entry may give (SPEC.md, discovery)."""

SPEC_TOOLS = (
    "skill_read_reference",
    "skill_run_script",
    "skill_list",
    "skill_install",
    "skill_remove",
    "read_skill",
    "read_skill_file",
    "run_skill_script",
    "activate_skill",
)
"""The tools of the specification: the keys :attr:`Runtime.tool_names` may have
(``activate_skill`` is dialect ``agentskills``'s activation)."""

READ_SCOPES = ("skill", "skills-root", "case-root")
"""What the runtime's file-reading tool may return by design (:attr:`Runtime.read_scope`)."""

SKILL_FORMATS = ("skill-md", "skill-yml")
"""The skill file formats a runtime may read (:attr:`Runtime.formats`)."""

MECHANISMS = (
    "skill_read_reference",
    "skill_run_script",
    "nested-scan",
    "argument-keys",
    "scan",
    "validate",
    "activate_skill",
)
"""The mechanisms a runtime may lack (the keys of :attr:`Runtime.lacks`)."""

DIALECTS: Mapping[str, Tuple[str, ...]] = {
    "portable-skills": (),
    "agentskills": ("strict", "lenient"),
}
"""The dialects the runner knows (PROTOCOL.md, "Dialects"), each with its modes: a claim of one
of them in :attr:`Runtime.dialects` gives a ``mode`` exactly when it has modes, and one of them.
A name (or version) the runner does not know is kept and shown; no case runs for it."""

MAX_CLAIM = 64
"""Longest ``name`` or ``version`` of a dialect claim (bytes of UTF-8), as the runner takes it."""

MAX_REASON = 4096
"""Longest reason :attr:`Runtime.lacks` may give (bytes of UTF-8); the runner keeps no more."""

FORMATS = ("portable", "legacy")

JSON = Any
CallResult = Dict[str, Any]
Entry = Dict[str, Any]


# --------------------------------------------------------------------------------------------
# Result helpers


def loaded(
    id: str,
    name: str,
    description: str,
    body: str,
    format: Optional[str] = "portable",
    **extra: JSON,
) -> Entry:
    """One loaded skill, for the list :meth:`Runtime.discover` returns.

    ``id`` is the skill directory's name, ``format`` ``"portable"`` (SKILL.md frontmatter) or
    ``"legacy"`` (skill.yml beside SKILL.md); ``name``, ``description`` and ``body`` as the
    runtime loaded them. ``extra`` fields are passed through (the runner ignores those it does
    not know). Dialect ``agentskills`` (PROTOCOL.md, "Dialects"): ``id`` is the skill's
    ``name``, ``location="/abs/.../SKILL.md"`` the absolute path of its SKILL.md, and
    ``format=None`` leaves ``format`` out (it is not sent there).
    """
    entry = {"id": id, "format": format, "name": name, "description": description, "body": body}
    if format is None:
        del entry["format"]
    entry.update(extra)
    return entry


def skipped(path: str, reason: str, **extra: JSON) -> Entry:
    """One path the scan skipped, for the list :meth:`Runtime.discover` returns.

    ``path`` is relative to the skills root, ``reason`` one of :data:`SKIP_REASONS`. Sent only
    when the runtime declares the ``skip-report`` feature; dropped otherwise.
    """
    entry = {"path": path, "reason": reason}
    entry.update(extra)
    return entry


def ok(value: Mapping[str, JSON]) -> CallResult:
    """A successful tool call: ``value`` is the tool's result object (SPEC.md gives its fields,
    e.g. ``{"skill", "path", "content"}`` for ``skill_read_reference``)."""
    return {"ok": True, "value": dict(value)}


def with_asked(result: CallResult, asked: Sequence[Mapping[str, JSON]]) -> CallResult:
    """Profile ``hitl``: ``result`` (from :func:`ok` or :func:`error`) with the questions the
    runtime asked the human during the call, each ``{"tool", "skill", "script", "args"}``, in order
    (PROTOCOL.md, "Profiles")."""
    out = dict(result)
    out["asked"] = [dict(q) for q in asked]
    return out


def validation(
    valid: bool, problems: Sequence[str], properties: Optional[Mapping[str, JSON]] = None
) -> Dict[str, JSON]:
    """Dialect ``agentskills``: the result :meth:`Runtime.validate` returns, the validator's own
    verdict (``valid``, never derived by the adapter), its ``problems`` in its own words (never
    compared) and the ``properties`` it read (``name``, ``description``, ``license``,
    ``compatibility``, ``allowed-tools``, ``metadata``); ``None`` leaves ``properties`` out, for
    a validator that read none (PROTOCOL.md, "Dialects")."""
    out: Dict[str, JSON] = {"valid": valid, "problems": list(problems)}
    if properties is not None:
        out["properties"] = dict(properties)
    return out


def error(code: str, **fields: JSON) -> CallResult:
    """A tool call that failed: ``code`` from SPEC.md (``not_found``, ``not_approved``, ...) and
    the fields SPEC.md gives it (``exit_code``, ``stderr``, ``approved_scripts``, ``hint``);
    ``message`` is free text, shown in reports and never compared."""
    body = {"code": code}
    body.update(fields)
    return {"ok": False, "error": body}


def _runtime_text(runtime_message: Union[str, BaseException], what: str) -> str:
    """The runtime's own text of a refusal: a string as is, an exception as ``"Type: text"``;
    an empty one is refused (``ValueError``): an adapter maps a runtime's signal, it never
    decides on its own."""
    text = ErrorMap.text_of(runtime_message) if isinstance(runtime_message, (str, BaseException)) else ""
    if not text.strip():
        raise ValueError(
            "%s needs the runtime's own message (an exception or its text), got %r: an adapter maps a runtime's signal, it never decides"
            % (what, runtime_message)
        )
    return text


def refusal(code: str, runtime_message: Union[str, BaseException], **fields: JSON) -> CallResult:
    """A tool call the *runtime* refused, mapped to ``code``: ``runtime_message`` is the signal it
    gave (the exception it raised, or the text it returned or logged) and becomes ``message``, so
    the report shows what the runtime said. Raises ``ValueError`` without one: an adapter maps,
    it never decides (PROTOCOL.md). For a table of many texts use :class:`ErrorMap`."""
    if not isinstance(code, str) or not code:
        raise ValueError("refusal() needs a code from SPEC.md, got %r" % (code,))
    if "message" in fields:
        raise ValueError("refusal(): the message is the runtime's (runtime_message), not a field")
    return error(code, message=_runtime_text(runtime_message, "refusal()"), **fields)


def _text_at_least(value: JSON, limit: int) -> int:
    """The characters of the strings (and keys) in ``value``, counted until they pass ``limit``
    (then any number above it): a lower bound on its JSON encoding's size, found without
    encoding it. Iterative, so no depth ends it."""
    total, todo = 0, [value]
    while todo and total <= limit:
        v = todo.pop()
        if isinstance(v, str):
            total += len(v)
        elif isinstance(v, dict):
            for k, x in v.items():
                total += len(k) if isinstance(k, str) else 0
                todo.append(x)
        elif isinstance(v, (list, tuple)):
            todo.extend(v)
    return total


def sendable(value: JSON) -> JSON:
    """``value`` with every string made sendable as UTF-8 JSON. Runtimes decode file names with
    Python's surrogateescape, so a non-UTF-8 directory name comes back as text with lone
    surrogates, which the protocol cannot carry: each such byte is written ``\\xHH`` instead (a
    surrogate that is no escaped byte as its ``\\udXXX`` escape). Every other string is
    unchanged; dict keys, list and tuple items are converted alike (a tuple becomes a list)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            try:
                raw = value.encode("utf-8", "surrogateescape")
            except UnicodeEncodeError:  # a surrogate that is not an escaped byte
                return value.encode("utf-8", "backslashreplace").decode("utf-8")
            return raw.decode("utf-8", "backslashreplace")
    if isinstance(value, dict):
        return {sendable(k): sendable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [sendable(v) for v in value]
    return value


def rename_keys(value: JSON, names: Mapping[str, str]) -> JSON:
    """``value`` with the keys in ``names`` renamed (old → new), every other key kept as it is;
    anything but a dict is returned unchanged. The runtime must still see what the spec's shape
    does not allow (an extra key, a non-object), so that its own checks are the ones tested."""
    if not isinstance(value, dict):
        return value
    return {names.get(k, k) if isinstance(k, str) else k: v for k, v in value.items()}


class MappedTool:
    """A tool of the specification mapped onto the runtime's own tool of another name or shape::

        READ = kit.MappedTool("skill_read_reference", "read_skill_resource",
                              args={"skill": "skill_name", "path": "resource_name"},
                              result={"skill_name": "skill", "resource_name": "path", "text": "content"})
        ...
        native = READ.native_args(args)           # the runtime's argument names
        return kit.ok(READ.spec_value(self.rt.call(READ.native, native)))

    ``args`` renames argument keys (spec → native) and ``result`` renames result keys (native →
    spec); other keys pass unchanged, a non-object is passed as it is. ``reshape(args)``, when
    given, reshapes what :meth:`native_args` returns further (script ``args`` as a mapping, say);
    it must not drop or repair what the spec's shape does not allow. Declare the names in
    :attr:`Runtime.tool_names` (:func:`MappedTool.names` builds it)."""

    __slots__ = ("spec", "native", "args", "result", "reshape")

    def __init__(
        self,
        spec: str,
        native: str,
        args: Optional[Mapping[str, str]] = None,
        result: Optional[Mapping[str, str]] = None,
        reshape: Optional[Callable[[JSON], JSON]] = None,
    ):
        if spec not in SPEC_TOOLS:
            raise ValueError("MappedTool: %r is not a tool of the specification (%s)" % (spec, ", ".join(SPEC_TOOLS)))
        if not isinstance(native, str) or not native:
            raise ValueError("MappedTool: the runtime's name of %s must be a non-empty string" % spec)
        self.spec, self.native = spec, native
        self.args = dict(args or {})
        self.result = dict(result or {})
        self.reshape = reshape

    def native_args(self, args: JSON) -> JSON:
        """The spec's arguments as the runtime's tool takes them."""
        out = rename_keys(args, self.args)
        return self.reshape(out) if self.reshape else out

    def spec_value(self, value: Mapping[str, JSON]) -> Dict[str, JSON]:
        """The runtime's result as the spec's value (for :func:`ok`)."""
        return dict(rename_keys(dict(value), self.result))

    @staticmethod
    def names(*tools: "MappedTool") -> Dict[str, str]:
        """``{spec name: native name}`` of ``tools``, for :attr:`Runtime.tool_names`."""
        return {t.spec: t.native for t in tools}


class ToolMap:
    """The runtime's mapped tools, both ways: the spec's name of a native tool the model is
    offered, and the native call of a spec tool. A tool that is not mapped keeps its name and its
    arguments (the case called it by the runtime's own name, or a name neither has)::

        TOOLS = kit.ToolMap(ACTIVATE, READ)
        tool_names = TOOLS.names()                       # for Runtime.tool_names
        return TOOLS.spec_names(names_the_model_saw)     # the ``tools`` step
        native, native_args = TOOLS.native_call(tool, args)
    """

    __slots__ = ("by_spec", "by_native")

    def __init__(self, *tools: MappedTool):
        self.by_spec = {t.spec: t for t in tools}
        self.by_native = {t.native: t for t in tools}
        if len(self.by_spec) != len(tools) or len(self.by_native) != len(tools):
            raise ValueError("ToolMap: two mapped tools share a spec name or a native name")

    def names(self) -> Dict[str, str]:
        """``{spec name: native name}``, for :attr:`Runtime.tool_names`."""
        return MappedTool.names(*self.by_spec.values())

    def get(self, spec: str) -> Optional[MappedTool]:
        """The mapped tool of spec name ``spec``, or ``None``."""
        return self.by_spec.get(spec)

    def is_native(self, name: str) -> bool:
        """Whether ``name`` is the runtime's name of a mapped tool."""
        return name in self.by_native

    def spec_names(self, natives: Iterable[str]) -> List[str]:
        """The names the model was offered, each mapped tool's under its spec name."""
        return [self.by_native[n].spec if n in self.by_native else n for n in natives]

    def native_call(self, tool: str, args: JSON) -> Tuple[str, JSON]:
        """The runtime's tool and arguments for a call of ``tool`` with ``args``."""
        mapped = self.by_spec.get(tool)
        return (mapped.native, mapped.native_args(args)) if mapped is not None else (tool, args)


def installed_version(distribution: str, adapter: str) -> str:
    """The version of the installed Python distribution ``distribution`` (what the adapter
    reports as the runtime's version), or an exit that says to run ``runner/adapters/<adapter>/
    install`` when this interpreter does not have it."""
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        raise SystemExit("%s adapter: %s is not installed in this interpreter (%s); run runner/adapters/%s/install"
                         % (adapter, distribution, sys.executable, adapter))


DEFAULT_TIMEOUT_MS = 30000
MAX_TIMEOUT_MS = 86400000


def timeout_ms(setting: Optional[str]) -> int:
    """The script time limit in milliseconds that ``config.timeout_ms`` (the text of
    ``SKILL_SCRIPT_TIMEOUT_MS``) means under SPEC.md ``run.timeout``: ASCII digits only, 1 to
    86,400,000; anything else (unset, empty, ``0``, ``-5``, ``1.5``, ``1e3``, `` 300``) is the
    default, 30,000. For a runtime that takes its timeout in other units: convert this
    (``timeout_ms(config.timeout_ms) / 1000`` seconds), and say in the adapter's README that the
    ``run.timeout.*`` cases then test this conversion, not the runtime."""
    if not isinstance(setting, str) or not setting or not all("0" <= c <= "9" for c in setting):
        return DEFAULT_TIMEOUT_MS
    value = int(setting)
    return value if 1 <= value <= MAX_TIMEOUT_MS else DEFAULT_TIMEOUT_MS


# --------------------------------------------------------------------------------------------
# Errors an adapter raises on purpose


class Refused(Exception):
    """Raise it when the *runtime* refused a whole step or to start, with what it said::

        def start_case(self, config, root):
            try:
                self.rt = acme.Host(config.skills_root)
            except acme.ConfigError as e:
                raise kit.Refused(e)            # the runtime will not start without its root

    Raised from :meth:`Runtime.start_case`, the case is answered ``case_started`` with
    ``refused`` (the runner then judges every step of it refused and sends none; :meth:`end_case`
    still follows); from a step method, the step is answered with ``refused`` in place of a
    result (a scan aborted by a FIFO ``SKILL.md``, a call rejected before any tool ran). The
    runner judges it a safe refusal (PROTOCOL.md, "Refusals"). ``runtime_message`` is the
    runtime's exception or its text; an empty one raises ``ValueError``."""

    def __init__(self, runtime_message: Union[str, BaseException]):
        self.message = _runtime_text(runtime_message, "Refused()")
        super().__init__(self.message)



class AdapterError(Exception):
    """Raise to answer the current request with a protocol ``error`` carrying this message (no
    traceback): the adapter cannot do what was asked (e.g. a configuration its runtime cannot
    express). The case is reported ERROR and the run goes on."""


class _NotImplemented(NotImplementedError):
    """Internal: raised by the defaults of :class:`Runtime` (answered without a traceback)."""


class Unmapped(Exception):
    """Raised by :meth:`ErrorMap.error` for a runtime error no rule matches (and no default):
    answered with a protocol ``error`` quoting the runtime's text, so the gap in the table shows
    in the report instead of being papered over with a guessed code."""

    def __init__(self, text: str):
        super().__init__(text)
        self.text = text


# --------------------------------------------------------------------------------------------
# Translating a runtime's errors into codes


class Rule:
    """One row of an :class:`ErrorMap`; build it with :func:`rule`."""

    __slots__ = ("pattern", "code", "why", "guess", "fields")

    def __init__(
        self,
        pattern: str,
        code: str,
        why: str = "",
        guess: bool = False,
        fields: Optional[Callable[["re.Match[str]"], Mapping[str, JSON]]] = None,
    ):
        self.pattern = re.compile(pattern)
        self.code = code
        self.why = why
        self.guess = guess
        self.fields = fields


def rule(
    pattern: str,
    code: str,
    why: str = "",
    *,
    guess: bool = False,
    fields: Optional[Callable[["re.Match[str]"], Mapping[str, JSON]]] = None,
) -> Rule:
    """A mapping rule: a runtime error whose text matches ``pattern`` (``re.search``; for an
    exception the text is ``"TypeName: message"``) gets ``code``.

    ``why`` says where the rule comes from. ``guess=True`` marks a rule that is not certain (the
    runtime says the same thing for two situations the spec tells apart, or the wording was
    inferred, not read in its source): every error it produces says so in its message, and
    :meth:`ErrorMap.table` lists it as a guess. ``fields(match)`` may add result fields, e.g.
    ``lambda m: {"exit_code": int(m["status"])}``.
    """
    return Rule(pattern, code, why, guess, fields)


class ErrorMap:
    """An explicit, ordered table from a runtime's error texts to SPEC.md's codes; the first
    matching rule wins::

        ERRORS = kit.ErrorMap(
            kit.rule(r"^Unknown skill", "unknown_skill", "tools.py raises it for a missing id"),
            kit.rule(r"outside the skill", "invalid_path", "one message for every path rule",
                     guess=True),
            default=None,
        )
        ...
        except my_runtime.ToolError as e:
            return ERRORS.error(e)

    ``default``: the code of a text no rule matches. Leave it ``None`` (the default) and such a
    text raises :class:`Unmapped`, which the kit answers with a protocol ``error``: an unknown
    message is a gap in the table, not something to guess silently.
    """

    def __init__(self, *rules: Rule, default: Optional[str] = None):
        for r in rules:
            if not isinstance(r, Rule):
                raise TypeError("ErrorMap takes rules made with rule(pattern, code, ...)")
        self.rules: Tuple[Rule, ...] = tuple(rules)
        self.default = default

    @staticmethod
    def text_of(failure: Union[str, BaseException]) -> str:
        """The text rules are matched against: a string as is, an exception as
        ``"TypeName: message"``."""
        if isinstance(failure, BaseException):
            return "%s: %s" % (type(failure).__name__, failure)
        return str(failure)

    def match(self, failure: Union[str, BaseException]) -> Tuple[Optional[int], Optional[Rule], Optional["re.Match[str]"]]:
        """The first rule matching ``failure``, as ``(number, rule, match)`` (numbered from 1);
        ``(None, None, None)`` when none does."""
        text = self.text_of(failure)
        for number, r in enumerate(self.rules, 1):
            m = r.pattern.search(text)
            if m:
                return number, r, m
        return None, None, None

    def code(self, failure: Union[str, BaseException]) -> Optional[str]:
        """The code ``failure`` maps to, or the default (``None`` when there is none)."""
        _, r, _ = self.match(failure)
        return r.code if r else self.default

    def error(self, failure: Union[str, BaseException], **fields: JSON) -> CallResult:
        """The ``error(...)`` result for ``failure``: its code from the table, ``fields`` plus
        those of the rule, and a ``message`` quoting the runtime's text and naming the rule
        (marked GUESS when it is one). Raises :class:`Unmapped` when nothing matches and there
        is no default."""
        text = self.text_of(failure)
        number, r, m = self.match(failure)
        if r is None or m is None:
            if self.default is None:
                raise Unmapped(text)
            return error(self.default, **dict(fields, message="%s [skillspec-kit: no rule matched; the default code %r]" % (text, self.default)))
        extra: Dict[str, JSON] = dict(r.fields(m)) if r.fields else {}
        extra.update(fields)
        note = "[skillspec-kit: rule %d /%s/ -> %s%s]" % (
            number,
            r.pattern.pattern,
            r.code,
            " (GUESS: %s)" % (r.why or "not certain") if r.guess else "",
        )
        extra.setdefault("message", "%s %s" % (text, note))
        return error(r.code, **extra)

    def table(self) -> str:
        """The table as Markdown, for the adapter's README (guesses marked)."""
        rows = ["| # | runtime text (regex) | code | certain? | why |", "|---|---|---|---|---|"]
        for number, r in enumerate(self.rules, 1):
            rows.append(
                "| %d | `%s` | `%s` | %s | %s |"
                % (number, r.pattern.pattern.replace("|", "\\|"), r.code, "GUESS" if r.guess else "yes", r.why.replace("|", "\\|"))
            )
        rows.append(
            "| - | anything else | %s | | |"
            % ("`%s`" % self.default if self.default else "protocol `error` (unmapped)")
        )
        return "\n".join(rows)


# --------------------------------------------------------------------------------------------
# The configuration of a case

# The types of ``case_start.config`` (PROTOCOL.md, ``case_start`` and "Profiles"): a field maps
# to (what is expected, its test), or to the fields of an object. Only types are checked: what a
# value means (a malformed allowlist, ``timeout_ms`` "abc", another ``session`` text) is the
# runtime's to judge, and cases send such values on purpose. A field that is absent keeps the
# default of :class:`Config`; a field the table does not know passes through (``Config.raw``).
_STRING = ("a string", lambda v: isinstance(v, str))
_STRING_OR_NULL = ("a string or null", lambda v: v is None or isinstance(v, str))
_BOOLEAN = ("a boolean", lambda v: isinstance(v, bool))
_STRINGS = ("a list of strings", lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v))
_STRINGS_OR_NULL = ("a list of strings or null", lambda v: v is None or _STRINGS[1](v))
_COUNT_OR_NULL = ("a non-negative integer or null", lambda v: v is None or (isinstance(v, int) and not isinstance(v, bool) and v >= 0))
_CONFIG_TYPES: Dict[str, Any] = {
    "skills_root": _STRING_OR_NULL,
    "script_allowlist": _STRING_OR_NULL,
    "tool_allowlist": _STRINGS_OR_NULL,
    "allow_trading": _BOOLEAN,
    "replay": _STRING_OR_NULL,
    "timeout_ms": _STRING_OR_NULL,
    "python": _STRING,
    "env": ("an object of strings", lambda v: isinstance(v, dict) and all(isinstance(x, str) for x in v.values())),
    "platform": _STRING_OR_NULL,
    "skill_dirs": {"user": _STRING_OR_NULL, "workspace": _STRING_OR_NULL, "installed": _STRING_OR_NULL},
    "registry": _STRING,
    "selection": {"max_active": _COUNT_OR_NULL, "max_context_tokens": _COUNT_OR_NULL},
    "hitl": {
        "enabled": _BOOLEAN,
        "script_tool_allowed": _BOOLEAN,
        "session": _STRING,
        "answers": _STRINGS,
        "timeout_ms": _STRING_OR_NULL,
    },
    "dialect": _STRING,
    "user_skills_root": _STRING,
}


def _config_problems(value: JSON, types: Mapping[str, Any] = _CONFIG_TYPES, where: str = "config") -> List[str]:
    """What is wrong with the types of ``value`` (``case_start.config``), each naming the field
    and what it must be; ``[]`` when nothing is. A wrong type is a request the kit cannot take
    (answered with ``error``), never an exception halfway through building :class:`Config`."""
    if not isinstance(value, dict):
        return ["`%s` must be an object, got %s" % (where, _describe(value))]
    problems: List[str] = []
    for key, expected in types.items():
        if key not in value:
            continue
        if isinstance(expected, dict):
            problems.extend(_config_problems(value[key], expected, "%s.%s" % (where, key)))
        elif not expected[1](value[key]):
            problems.append("`%s.%s` must be %s, got %s" % (where, key, expected[0], _describe(value[key])))
    return problems


class Config:
    """The runtime configuration of one case (PROTOCOL.md, ``case_start``), as attributes.

    ``skills_root``: the skills root (``SPORTSCLAW_SKILL_GUIDES_DIR``) or ``None`` (unset: the
    feature is off); sent as an operator wrote it (may be empty or relative).
    ``script_allowlist``: the operator's script allowlist text, verbatim (may be malformed on
    purpose), or ``None``. ``tool_allowlist``: list of allowed tool names, ``None`` for all.
    ``allow_trading``: bool. ``replay``: ``SPORTS_SKILLS_REPLAY`` or ``None``.
    ``timeout_ms``: ``SKILL_SCRIPT_TIMEOUT_MS`` as text (valid or not) or ``None``.
    ``python``: the configured interpreter exactly as written (pass it through unchanged).
    ``env``: the runtime's whole process environment (dict of str). ``platform``: ``None`` or
    ``"no-process-groups"`` (feature ``platform-emulation`` only). ``dialect``: the case's
    dialect (PROTOCOL.md, "Dialects"), sent only when it is not portable-skills, ``None``
    otherwise; a runtime that claims several applies that one's rules. ``user_skills_root``
    (dialect ``agentskills``): the user-level skills directory, absolute, or ``None`` (none;
    ``skills_root`` is then the project's). ``raw``: the dict as sent, with any field a later
    protocol revision adds.

    The kit checks the types of a ``config`` it is sent before building this (a wrong one is
    answered with an ``error`` naming the field): a :class:`Config` the runtime is handed holds
    what PROTOCOL.md says each field holds.
    """

    __slots__ = (
        "skills_root",
        "script_allowlist",
        "tool_allowlist",
        "allow_trading",
        "replay",
        "timeout_ms",
        "python",
        "env",
        "platform",
        "dialect",
        "user_skills_root",
        "raw",
    )

    def __init__(self, raw: Mapping[str, JSON]):
        self.raw = dict(raw)
        self.skills_root: Optional[str] = raw.get("skills_root")
        self.script_allowlist: Optional[str] = raw.get("script_allowlist")
        tools = raw.get("tool_allowlist")
        self.tool_allowlist: Optional[List[str]] = list(tools) if tools is not None else None
        self.allow_trading: bool = bool(raw.get("allow_trading", False))
        self.replay: Optional[str] = raw.get("replay")
        self.timeout_ms: Optional[str] = raw.get("timeout_ms")
        self.python: str = raw.get("python", "")
        self.env: Dict[str, str] = dict(raw.get("env") or {})
        self.platform: Optional[str] = raw.get("platform")
        self.dialect: Optional[str] = raw.get("dialect")
        self.user_skills_root: Optional[str] = raw.get("user_skills_root")

    def runtime_env(self, add: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
        """``env`` plus the variables in ``add`` that ``env`` does not set: what PROTOCOL.md
        allows an adapter to add so that its runtime can start (a ``HOME``, say). A variable
        ``env`` sets is never changed, and ``PATH`` is never added (raises ``ValueError``)."""
        out = dict(self.env)
        for key, value in (add or {}).items():
            if key in out:
                continue
            if key == "PATH":
                raise ValueError("an adapter must not add PATH to the runtime's environment (PROTOCOL.md)")
            out[key] = value
        return out

    def __repr__(self) -> str:
        return "Config(%r)" % (self.raw,)


# --------------------------------------------------------------------------------------------
# The interface an adapter fills in


class Runtime:
    """What an adapter implements: subclass it, set the class attributes, override the methods
    your runtime supports. Methods may be ``async def``: the kit runs them to completion on one
    event loop it keeps for the whole process. Everything a method raises is answered with a
    protocol ``error`` (see the module documentation); a tool's own failure is a *result*
    (:func:`error`), not an exception.

    The kit calls, in order: :meth:`start_case` once per case, then one method per step, then
    :meth:`end_case` (also after a :meth:`start_case` that raised, and when the runner stops the
    adapter or closes its stdin in the middle of a case).
    """

    name: str = ""
    """The runtime's name, shown in reports (required: the handshake refuses an empty one)."""
    version: Optional[str] = None
    """The runtime's version, as text (required)."""
    language: Optional[str] = "python"
    features: Sequence[str] = ()
    """Optional features the runtime really has, from :data:`FEATURES`."""
    process_per_case: bool = False
    """True when the runtime caches state at import time: the runner then starts a fresh
    adapter process for every case (slower, never less correct)."""
    side_by_side: bool = True
    """False when two processes of this adapter cannot run at the same time (state shared
    between processes: a fixed port, a fixed directory or lock file outside the case root): the
    runner's ``--jobs N`` then starts only one. Sent in ``started`` only when False (PROTOCOL.md,
    ``side_by_side``)."""
    tool_names: Mapping[str, str] = {}
    """The runtime's own name of each spec tool the adapter maps onto one of the runtime's
    tools (``{"skill_read_reference": "read_skill_resource"}``, keys from :data:`SPEC_TOOLS`;
    :meth:`MappedTool.names` builds it). Sent in ``started``: the runner's prompt checks then
    hold for the native names too. ``tools()`` still returns the spec's names."""
    read_scope: Optional[str] = None
    """What the runtime's file-reading tool returns by design, from :data:`READ_SCOPES`:
    ``"skill"`` (only files inside the skill's own directory, what the specification requires),
    ``"skills-root"`` (any file below the skills root), ``"case-root"`` (any file below its
    workspace, which the adapter roots at the case root holding the skills root). The runner
    then does not count a canary read inside that scope as a crossing of a boundary the runtime
    claims. ``None``: ``"skill"``, not sent."""
    formats: Optional[Sequence[str]] = None
    """The skill file formats the runtime reads, a non-empty list from :data:`SKILL_FORMATS`,
    each once: ``"skill-md"`` (SKILL.md with frontmatter), ``"skill-yml"`` (the legacy skill.yml
    beside a SKILL.md). A runtime that never reads skill.yml declares ``["skill-md"]``; the cases
    about skill.yml are then UNSUPPORTED. ``None``: both, not sent."""
    lacks: Mapping[str, str] = {}
    """The mechanisms the runtime does not have (keys from :data:`MECHANISMS`), each with the
    reason, what its own docs or code show (non-empty, at most :data:`MAX_REASON` bytes)::

        lacks = {"skill_run_script": "hermes-agent 0.19.0 has no script tool: tools/skills_tool.py "
                                     "registers skills_list and skill_view only"}

    ``skill_read_reference`` / ``skill_run_script``: no such tool at all; ``nested-scan``: it
    scans only the skills root's direct children; ``argument-keys``: its tool never sees the
    argument object (a command line taking positional values). A case that passes while the
    runtime lacks a mechanism it exercises is reported "not exercised", not passed. Dialect
    ``agentskills`` adds operations a runtime may not have at all: ``scan`` (no ``discover``: a
    validator), ``validate`` (no validator: most clients), ``activate_skill`` (no activation);
    a case that needs one of those is UNSUPPORTED, never sent. Sent only when not empty."""
    dialects: Optional[Sequence[Mapping[str, str]]] = None
    """The dialects the runtime claims (PROTOCOL.md, "Dialects"), a non-empty list of
    ``{"name", "version", "mode"?}`` with no other key, each name once::

        dialects = [{"name": "agentskills", "version": "2026-08", "mode": "strict"}]

    ``name`` and ``version`` are 1 to :data:`MAX_CLAIM` bytes; a dialect of :data:`DIALECTS`
    with modes needs a ``mode`` from its list (``agentskills``: ``strict`` or ``lenient``), one
    without none. Cases of a dialect (or version, or mode) not claimed are UNSUPPORTED. A runtime
    that claims several reads the case's one in ``config.dialect``. ``None``: portable-skills 1,
    not sent."""

    def start_case(self, config: Config, root: str) -> None:
        """Start a fresh runtime for a case, configured by ``config``; ``root`` is the case's
        temporary directory (absolute). Nothing may carry over from an earlier case. The runtime
        scans the skills root now, as a real host does at start-up."""

    def discover(self) -> Sequence[Entry]:
        """Scan the skills root again; return :func:`loaded` entries in the runtime's order
        (and :func:`skipped` entries, sent only with the ``skip-report`` feature)."""
        raise _NotImplemented("discover() is not implemented by this adapter")

    def tools(self) -> Sequence[str]:
        """The names of the tools offered to the model."""
        raise _NotImplemented("tools() is not implemented by this adapter")

    def prompt(self) -> Tuple[str, str]:
        """``(text, baseline)``: the system prompt, and the prompt the same runtime renders
        without the portable-skills feature (SPEC.md ``prompt.unchanged``)."""
        raise _NotImplemented("prompt() is not implemented by this adapter")

    def call(self, tool: str, args: JSON) -> CallResult:
        """Call ``tool`` through the runtime's normal pipeline with ``args`` exactly as given
        (any JSON value: a dict, but also a list, a string, ``None``); return :func:`ok` or
        :func:`error`. The default answers ``unknown_tool``, what a runtime that offers no such
        tool answers."""
        return error("unknown_tool", message="this adapter implements no tool calls (call() is not overridden)")

    def new_turn(self) -> None:
        """Start a new turn (forget the calls of the current one). Not implemented by default:
        a runtime that keeps nothing per turn overrides it with a method that does nothing."""
        raise _NotImplemented(
            "new_turn() is not implemented by this adapter (a runtime that keeps nothing per turn overrides it to do nothing)"
        )

    def validate(self, path: str) -> Dict[str, JSON]:
        """Dialect ``agentskills``: the runtime's validator on one skill directory, ``path``
        relative to the case root (``os.path.join(root, path)``); return :func:`validation`,
        ``{"valid": bool, "problems": [str], "properties"?: {...}}``. A validator that will not
        judge the directory at all raises :class:`Refused` with its words. Not implemented by
        default: a runtime without a validator declares ``lacks["validate"]``, and the runner
        then sends it no ``validate`` step."""
        raise _NotImplemented(
            "validate() is not implemented by this adapter (a runtime without a validator declares lacks['validate'])"
        )

    def end_case(self) -> None:
        """Release the case's runtime (stop its processes, remove its temporary files)."""


# --------------------------------------------------------------------------------------------
# stdin and stdout


class _Wire:
    """The protocol's own descriptors, taken over from fds 0 and 1."""

    def __init__(self, in_fd: int, out_fd: int):
        self.in_fd = in_fd
        self.out_fd = out_fd

    def write_line(self, data: bytes) -> None:
        view = memoryview(data + b"\n")
        while view:
            written = os.write(self.out_fd, view)
            view = view[written:]


class _Lines:
    """The request lines arriving on a descriptor, read in chunks of at most 64 KiB. A line is
    kept only while it stays within ``limit`` bytes: past that, what was kept is dropped and the
    rest of the line is read and thrown away up to its newline, so that no line, however long,
    holds more than ``limit`` bytes in memory (``readline()`` would hold all of it, and a 400 MiB
    line would end the adapter with a MemoryError)."""

    CHUNK = 1 << 16

    def __init__(self, fd: int, limit: int):
        self.fd = fd
        self.limit = limit
        self.buf = b""
        self.pos = 0  # where the unread part of buf starts: no copy of the rest per line

    def next(self) -> Optional[Tuple[Optional[bytearray], int]]:
        """``(line, size)``: the next line without its newline, and its size in bytes; ``line``
        is ``None`` when the size is over the limit (its bytes were discarded). ``None`` at the
        end of input. A last line without a newline counts as a line."""
        line: Optional[bytearray] = bytearray()
        size = 0
        while True:
            if self.pos >= len(self.buf):
                self.buf, self.pos = os.read(self.fd, self.CHUNK), 0
                if not self.buf:
                    return (line, size) if size else None
            nl = self.buf.find(b"\n", self.pos)
            end = len(self.buf) if nl < 0 else nl
            size += end - self.pos
            if line is not None:
                if size <= self.limit:
                    line += self.buf[self.pos:end]
                else:
                    line = None  # over the limit: let go of it now, not at the newline
            if nl >= 0:
                self.pos = nl + 1
                return line, size
            self.pos = end


_WIRE: Optional[_Wire] = None


def _take_over_stdio() -> _Wire:
    """Keeps private duplicates of fds 0 and 1 for the protocol; points fd 1 (and so
    ``sys.stdout``) at stderr and fd 0 at ``/dev/null``. Idempotent."""
    global _WIRE
    if _WIRE is not None:
        return _WIRE
    in_fd = os.dup(0)  # os.dup makes the copy non-inheritable: no child process gets it
    out_fd = os.dup(1)
    try:
        os.dup2(2, 1)
    except OSError:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    for stream in (sys.stdout, sys.__stdout__):
        if stream is not None:
            try:
                stream.flush()  # what was buffered before now goes to stderr
                stream.reconfigure(line_buffering=True)  # type: ignore[attr-defined]
            except (AttributeError, OSError, ValueError):
                pass
    _WIRE = _Wire(in_fd, out_fd)
    return _WIRE


def _log(text: str) -> None:
    try:
        sys.stderr.write("skillspec-kit: %s\n" % text)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


# --------------------------------------------------------------------------------------------
# The conversation


class _Answer(Exception):
    """Internal: answer the request with a protocol ``error`` carrying this message."""


def _clean(text: str, limit: int = 4000) -> str:
    """``text`` made safe for a protocol message: no lone surrogates, bounded."""
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= limit else text[:limit] + "... (%d characters in all)" % len(text)


def _describe(value: JSON) -> str:
    return _clean(repr(value), 200)


def _find_unencodable(value: JSON, path: str) -> Optional[str]:
    """Where in ``value`` a string with a lone surrogate or a non-finite number is."""
    queue = collections.deque([(value, path)])
    while queue:
        v, p = queue.popleft()
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return "%s (%s) is not valid Unicode: a lone surrogate, e.g. a file name decoded with surrogateescape" % (p, _describe(v))
        elif isinstance(v, float) and not math.isfinite(v):
            return "%s is %r, which JSON cannot hold" % (p, v)
        elif isinstance(v, dict):
            for k, item in v.items():
                key = ".%s" % k if isinstance(k, str) and k.isidentifier() else "[%s]" % _describe(k)
                if isinstance(k, str):
                    queue.append((k, "the key %s%s" % (p, key)))
                queue.append((item, p + key))
        elif isinstance(v, (list, tuple)):
            for i, item in enumerate(v):
                queue.append((item, "%s[%d]" % (p, i)))
    return None


def _is_str_list(value: JSON) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(x, str) for x in value)


def _is_reason(value: JSON) -> bool:
    """A reason of :attr:`Runtime.lacks`: text that says something, within what the runner keeps."""
    if not isinstance(value, str) or not value.strip():
        return False
    try:
        return len(value.encode("utf-8")) <= MAX_REASON
    except UnicodeEncodeError:  # a lone surrogate cannot be sent
        return False


def _is_claim_text(value: JSON) -> bool:
    """A ``name`` or ``version`` of a dialect claim: 1 to :data:`MAX_CLAIM` bytes of UTF-8."""
    if not isinstance(value, str) or not value:
        return False
    try:
        return len(value.encode("utf-8")) <= MAX_CLAIM
    except UnicodeEncodeError:
        return False


def _dialects_problems(dialects: JSON) -> List[str]:
    """What is wrong with :attr:`Runtime.dialects` (not ``None``), as the runner would refuse it
    (PROTOCOL.md, "Dialects"); ``[]`` when nothing is."""
    shape = '{"name": str, "version": str, "mode"?: str}'
    if not (isinstance(dialects, (list, tuple)) and dialects):
        return [
            "`dialects` must be a non-empty list of %s (or None: portable-skills, not sent), got %s"
            % (shape, _describe(dialects))
        ]
    problems: List[str] = []
    names: List[str] = []
    for i, claim in enumerate(dialects):
        if not (
            isinstance(claim, collections.abc.Mapping)
            and set(claim) <= {"name", "version", "mode"}
            and _is_claim_text(claim.get("name"))
            and _is_claim_text(claim.get("version"))
            and ("mode" not in claim or isinstance(claim["mode"], str))
        ):
            problems.append(
                "`dialects[%d]` must be %s with no other key, name and version of 1 to %d bytes, got %s"
                % (i, shape, MAX_CLAIM, _describe(claim))
            )
            continue
        name, mode = claim["name"], claim.get("mode")
        if name in names:
            problems.append("`dialects` claims %r twice" % name)
        names.append(name)
        modes = DIALECTS.get(name)
        if modes is None:
            continue  # a dialect the runner does not know: kept and shown, no case runs for it
        if modes and mode is None:
            problems.append("`dialects[%d]`: dialect %r needs a `mode`, one of %s" % (i, name, ", ".join(modes)))
        elif modes and mode not in modes:
            problems.append(
                "`dialects[%d]`: dialect %r has no mode %s (its modes: %s)" % (i, name, _describe(mode), ", ".join(modes))
            )
        elif not modes and mode is not None:
            problems.append("`dialects[%d]`: dialect %r has no modes, got the mode %s" % (i, name, _describe(mode)))
    return problems


class _Session:
    def __init__(self, runtime: Runtime, wire: _Wire):
        self.runtime = runtime
        self.wire = wire
        self.open_seq: Optional[int] = None
        # The runtime's message when it refused to start for the open case.
        self.refused_start: Optional[str] = None
        self.loop: Optional[asyncio.AbstractEventLoop] = None

    # -- calling into the adapter

    def invoke(self, method: str, *args: JSON) -> JSON:
        fn = getattr(self.runtime, method)
        try:
            value = fn(*args)
            if inspect.isawaitable(value):
                if self.loop is None:
                    self.loop = asyncio.new_event_loop()
                    asyncio.set_event_loop(self.loop)
                value = self.loop.run_until_complete(value)
            return value
        except Refused:
            raise
        except AdapterError as e:
            raise _Answer(str(e)) from None
        except Unmapped as e:
            raise _Answer("the runtime's error is not in the adapter's mapping table (ErrorMap): %s" % e.text) from None
        except _NotImplemented as e:
            raise _Answer(str(e)) from None
        except (Exception, SystemExit) as e:  # noqa: B902 - the runtime's failure is an answer
            _log("%s() raised; answering error. Traceback:" % method)
            traceback.print_exc(file=sys.stderr)
            sys.stderr.flush()
            kind = "called sys.exit(%r)" % (e.code,) if isinstance(e, SystemExit) else "raised %s: %s" % (type(e).__name__, e)
            raise _Answer("%s() %s (traceback on the adapter's stderr)" % (method, kind)) from None

    def cleanup(self) -> None:
        """Ends an open case (stop, end of input)."""
        if self.open_seq is not None:
            self.open_seq = None
            self.refused_start = None
            try:
                self.invoke("end_case")
            except _Answer as e:
                _log("end_case() on shutdown: %s" % e)

    # -- the requests

    def handle(self, msg: JSON) -> Optional[Dict[str, JSON]]:
        if not isinstance(msg, dict):
            return _err(None, "a request must be a JSON object, got %s" % _describe(msg))
        kind = msg.get("type")
        seq = msg.get("seq")
        if not (isinstance(seq, int) and not isinstance(seq, bool) and seq >= 0):
            seq = None
        try:
            if kind == "start":
                return self.start(msg)
            if kind == "stop":
                return None
            if seq is None:
                raise _Answer("`%s` request without a valid `seq`" % _clean(str(kind), 80))
            if kind == "case_start":
                return self.case_start(seq, msg)
            if kind == "step":
                return self.step(seq, msg)
            if kind == "case_end":
                return self.case_end(seq)
            raise _Answer("unknown request type %s (this adapter speaks protocol version %d)" % (_describe(kind), PROTOCOL_VERSION))
        except _Answer as e:
            return _err(seq, str(e))

    def start(self, msg: Dict[str, JSON]) -> Dict[str, JSON]:
        version = msg.get("protocol_version")
        if version != PROTOCOL_VERSION or isinstance(version, bool):
            return _err(None, "protocol version %s is not supported (this adapter speaks %d)" % (_describe(version), PROTOCOL_VERSION))
        rt = self.runtime
        name, version_text = getattr(rt, "name", None), getattr(rt, "version", None)
        features = getattr(rt, "features", ())
        language = getattr(rt, "language", "python")
        problems = []
        if not isinstance(name, str) or not name:
            problems.append("`name` must be a non-empty string")
        if not isinstance(version_text, str):
            problems.append("`version` must be a string")
        if not _is_str_list(features):
            problems.append("`features` must be a list of strings")
        if language is not None and not isinstance(language, str):
            problems.append("`language` must be a string or None")
        tool_names = getattr(rt, "tool_names", None) or {}
        if not (
            isinstance(tool_names, collections.abc.Mapping)
            and all(k in SPEC_TOOLS and isinstance(v, str) and v and not any(c.isspace() or ord(c) < 32 or 127 <= ord(c) < 160 for c in v) for k, v in tool_names.items())
        ):
            problems.append("`tool_names` must map tools of the specification (%s) to the runtime's own names (non-empty, no spaces)" % ", ".join(SPEC_TOOLS))
        read_scope = getattr(rt, "read_scope", None)
        if read_scope is not None and not (isinstance(read_scope, str) and read_scope in READ_SCOPES):
            problems.append("`read_scope` must be one of %s (or None: skill), got %s" % (", ".join(READ_SCOPES), _describe(read_scope)))
        formats = getattr(rt, "formats", None)
        if formats is not None and not (
            _is_str_list(formats) and formats and all(f in SKILL_FORMATS for f in formats) and len(set(formats)) == len(formats)
        ):
            problems.append("`formats` must be a non-empty list of %s, each once (or None: both), got %s" % (", ".join(SKILL_FORMATS), _describe(formats)))
        lacks = getattr(rt, "lacks", None) or {}
        if not isinstance(lacks, collections.abc.Mapping):
            problems.append("`lacks` must map mechanisms (%s) to reasons, got %s" % (", ".join(MECHANISMS), _describe(lacks)))
        else:
            for mechanism, reason in lacks.items():
                if mechanism not in MECHANISMS:
                    problems.append("`lacks` names %s, not a mechanism of %s" % (_describe(mechanism), ", ".join(MECHANISMS)))
                elif not _is_reason(reason):
                    problems.append(
                        "`lacks[%r]` must be a reason, a non-empty string of at most %d bytes of UTF-8 saying what the runtime's docs or code show, got %s"
                        % (mechanism, MAX_REASON, _describe(reason))
                    )
        dialects = getattr(rt, "dialects", None)
        if dialects is not None:
            problems.extend(_dialects_problems(dialects))
        if problems:
            return _err(None, "the adapter's Runtime is misdeclared: " + "; ".join(problems))
        return {
            "type": "started",
            "protocol_version": PROTOCOL_VERSION,
            "implementation": {
                "name": name,
                "version": version_text,
                "language": language,
                "features": list(features),
                "process_per_case": bool(getattr(rt, "process_per_case", False)),
                **({} if getattr(rt, "side_by_side", True) else {"side_by_side": False}),
                **({"tool_names": dict(tool_names)} if tool_names else {}),
                **({"read_scope": read_scope} if read_scope is not None else {}),
                **({"formats": list(formats)} if formats is not None else {}),
                **({"lacks": dict(lacks)} if lacks else {}),
                **({"dialects": [dict(d) for d in dialects]} if dialects is not None else {}),
            },
        }

    def case_start(self, seq: int, msg: Dict[str, JSON]) -> Dict[str, JSON]:
        if self.open_seq is not None:
            raise _Answer("case %d is still open: `case_end` it before starting case %d" % (self.open_seq, seq))
        root, config = msg.get("root"), msg.get("config")
        # One bad request never ends the session (PROTOCOL.md, "Errors"): a field of the wrong
        # type is answered here, naming it, before the runtime sees anything, and the case is
        # not opened, so the next `case_start` starts afresh.
        problems = [] if isinstance(root, str) else ["`root` must be a string, got %s" % _describe(root)]
        problems.extend(_config_problems(config))
        if problems:
            raise _Answer("`case_start` has fields of the wrong type: " + "; ".join(problems))
        self.open_seq = seq
        self.refused_start = None
        try:
            self.invoke("start_case", Config(config), root)
        except Refused as e:
            # The runtime would not start: the case stays open (case_end follows) and every step
            # of it is refused with the runtime's message.
            self.refused_start = e.message
            return {"type": "case_started", "seq": seq, "refused": {"message": _clean(e.message)}}
        except _Answer:
            # No case_end follows a refused case_start: release what was half built now.
            self.open_seq = None
            try:
                self.invoke("end_case")
            except _Answer as e:
                _log("end_case() after a failed start_case(): %s" % e)
            raise
        return {"type": "case_started", "seq": seq}

    def case_end(self, seq: int) -> Dict[str, JSON]:
        if self.open_seq != seq:
            raise _Answer("`case_end` for case %d, which is not open" % seq)
        self.open_seq = None
        self.refused_start = None
        self.invoke("end_case")
        return {"type": "case_ended", "seq": seq}

    def step(self, seq: int, msg: Dict[str, JSON]) -> Dict[str, JSON]:
        index, step = msg.get("index"), msg.get("step")
        if self.open_seq != seq:
            raise _Answer("step for case %d, which is not open" % seq)
        if not (isinstance(index, int) and not isinstance(index, bool) and index >= 0):
            raise _Answer("`step` request without a valid `index`")
        if not isinstance(step, dict):
            raise _Answer("`step` request without a `step` object")
        if self.refused_start is not None:
            return {"type": "step_result", "seq": seq, "index": index, "refused": {"message": _clean(self.refused_start)}}
        try:
            result = self.operation(step)
        except Refused as e:
            return {"type": "step_result", "seq": seq, "index": index, "refused": {"message": _clean(e.message)}}
        return {"type": "step_result", "seq": seq, "index": index, "result": result}

    def operation(self, step: Dict[str, JSON]) -> Dict[str, JSON]:
        """The result of one step operation (a :class:`Refused` passes through)."""
        op = step.get("op")
        if op == "discover":
            result = self.discover()
        elif op == "tools":
            offered = self.invoke("tools")
            if not _is_str_list(offered):
                raise _Answer("adapter bug: tools() must return a list of tool names, got %s" % _describe(offered))
            result = {"offered": list(offered)}
        elif op == "prompt":
            result = self.prompt()
        elif op == "call":
            tool = step.get("tool")
            if not isinstance(tool, str) or "args" not in step:
                raise _Answer("`call` step without a string `tool` and `args`")
            result = self.call(tool, step["args"])
        elif op == "new_turn":
            self.invoke("new_turn")
            result = {}
        elif op == "validate":
            path = step.get("path")
            if not isinstance(path, str):
                raise _Answer("`validate` step without a string `path`")
            result = self.validate(path)
        else:
            raise _Answer("unknown op %s (this adapter speaks protocol version %d)" % (_describe(op), PROTOCOL_VERSION))
        return result

    def discover(self) -> Dict[str, JSON]:
        entries = self.invoke("discover")
        if isinstance(entries, (str, bytes, collections.abc.Mapping)) or not isinstance(entries, collections.abc.Iterable):
            raise _Answer("adapter bug: discover() must return a list of loaded(...) / skipped(...) entries, got %s" % _describe(entries))
        entries = list(entries)
        found: List[Entry] = []
        skips: List[Entry] = []
        for i, e in enumerate(entries):
            if isinstance(e, dict) and "reason" in e and "id" not in e:
                if not isinstance(e.get("path"), str) or e.get("reason") not in SKIP_REASONS:
                    raise _Answer("adapter bug: discover() entry %d is a skipped entry with a bad path or a reason not in %s: %s" % (i, "/".join(SKIP_REASONS), _describe(e)))
                skips.append(e)
            elif isinstance(e, dict) and isinstance(e.get("id"), str):
                bad = [k for k in ("name", "description", "body", "location") if k in e and not isinstance(e[k], str)]
                if bad or ("format" in e and e["format"] not in FORMATS):
                    raise _Answer(
                        "adapter bug: discover() entry %d (%s) needs string name/description/body/location "
                        "and a format of portable or legacy" % (i, _describe(e.get("id")))
                    )
                found.append(e)
            else:
                raise _Answer("adapter bug: discover() entry %d is neither loaded(...) nor skipped(...): %s" % (i, _describe(e)))
        result: Dict[str, JSON] = {"loaded": found}
        if "skip-report" in (getattr(self.runtime, "features", ()) or ()):
            result["skipped"] = skips
        return result

    def validate(self, path: str) -> Dict[str, JSON]:
        value = self.invoke("validate", path)
        if not (
            isinstance(value, dict)
            and set(value) <= {"valid", "problems", "properties"}
            and isinstance(value.get("valid"), bool)
            and _is_str_list(value.get("problems"))
            and isinstance(value.get("properties", {}), dict)
        ):
            raise _Answer(
                'adapter bug: validate() must return validation(...), {"valid": bool, "problems": [str], '
                '"properties"?: {...}} with no other key (properties left out when the validator read none); '
                "got %s" % _describe(value)
            )
        result: Dict[str, JSON] = {"valid": value["valid"], "problems": list(value["problems"])}
        if "properties" in value:
            result["properties"] = value["properties"]
        return result

    def prompt(self) -> Dict[str, JSON]:
        value = self.invoke("prompt")
        if isinstance(value, dict):
            value = (value.get("text"), value.get("baseline"))
        if not (isinstance(value, (tuple, list)) and len(value) == 2 and all(isinstance(x, str) for x in value)):
            raise _Answer("adapter bug: prompt() must return (text, baseline), two strings; got %s" % _describe(value))
        return {"text": value[0], "baseline": value[1]}

    def call(self, tool: str, args: JSON) -> Dict[str, JSON]:
        value = self.invoke("call", tool, args)
        # Profile `hitl` (PROTOCOL.md): a result may carry `asked`, the list of questions the
        # runtime asked the human during the call (see :func:`with_asked`).
        size = 2
        if isinstance(value, dict) and "asked" in value:
            if not (isinstance(value["asked"], list) and all(isinstance(q, dict) for q in value["asked"])):
                raise _Answer("adapter bug: `asked` must be a list of question objects, got %s" % _describe(value["asked"]))
            size = 3
        if isinstance(value, dict) and value.get("ok") is True and isinstance(value.get("value"), dict) and len(value) == size:
            return value
        if (
            isinstance(value, dict)
            and value.get("ok") is False
            and isinstance(value.get("error"), dict)
            and isinstance(value["error"].get("code"), str)
            and len(value) == size
        ):
            return value
        raise _Answer("adapter bug: call() must return ok({...}) or error(code, ...), got %s" % _describe(value))

    # -- the loop

    def encode(self, response: Dict[str, JSON]) -> bytes:
        # A runtime that hands back a 4 GiB text (a sparse file read whole) would exhaust memory
        # in json.dumps before the size check below: count the text first (each character is at
        # least one byte of the line) and answer the error without encoding it.
        chars = _text_at_least(response, MAX_LINE)
        if chars > MAX_LINE:
            return _encode_error(
                response.get("seq") if isinstance(response, dict) else None,
                "the adapter's answer holds more than %d characters of text, above the protocol's line "
                "limit of %d bytes: not sent (the runtime's answer is not cut)" % (MAX_LINE, MAX_LINE),
            )
        try:
            data = json.dumps(response, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
        except (UnicodeEncodeError, ValueError, TypeError, RecursionError) as e:
            where = _find_unencodable(response.get("result"), "result") if isinstance(response, dict) else None
            seq = response.get("seq") if isinstance(response, dict) else None
            what = where or "%s: %s" % (type(e).__name__, e)
            return _encode_error(seq, "the adapter's answer cannot be sent as UTF-8 JSON: %s" % what)
        if len(data) > MAX_LINE:
            return _encode_error(
                response.get("seq"),
                "the adapter's answer is %d bytes, above the protocol's line limit of %d bytes" % (len(data), MAX_LINE),
            )
        return data

    def run(self) -> None:
        lines = _Lines(self.wire.in_fd, MAX_REQUEST)
        while True:
            got = lines.next()
            if got is None:
                self.cleanup()
                return
            line, size = got
            # A request line that cannot be taken is answered with an error (seq null), and the
            # next line is served (PROTOCOL.md, "Errors").
            if line is None:
                response: Optional[Dict[str, JSON]] = _err(
                    None,
                    "request line of %d bytes is over the adapter kit's limit of %d bytes and was discarded unread (the runner's own lines are at most %d bytes)"
                    % (size, MAX_REQUEST, MAX_LINE),
                )
            elif not line or line.isspace():  # a blank line (isspace: no copy of a long line)
                continue
            else:
                response = self.answer(line)
                if response is None:  # stop
                    self.cleanup()
                    return
            try:
                self.wire.write_line(self.encode(response))
            except BrokenPipeError:
                self.cleanup()
                return

    def answer(self, line: bytearray) -> Optional[Dict[str, JSON]]:
        """The response to one request line; ``None`` for ``stop``."""
        try:
            msg = json.loads(line.decode("utf-8"))
        except UnicodeDecodeError as e:
            return _err(None, "request is not valid UTF-8 (at byte %d)" % e.start)
        except ValueError as e:
            return _err(None, "request is not JSON: %s" % e)
        except RecursionError:
            return _err(None, "request is nested too deeply to decode (Python's recursion limit is %d)" % sys.getrecursionlimit())
        try:
            return self.handle(msg)
        except RecursionError:
            return _err(None, "request is nested too deeply to handle (Python's recursion limit is %d)" % sys.getrecursionlimit())


def _err(seq: Optional[int], message: str) -> Dict[str, JSON]:
    return {"type": "error", "seq": seq, "message": _clean(message)}


def _encode_error(seq: JSON, message: str) -> bytes:
    if not (isinstance(seq, int) and not isinstance(seq, bool)):
        seq = None
    return json.dumps(_err(seq, message), ensure_ascii=True).encode("ascii")


def serve(runtime: Runtime) -> None:
    """Answers the runner's requests with ``runtime`` until ``stop`` or the end of stdin, then
    returns (ending the open case first, if any). Call it once, at the end of the adapter."""
    if not isinstance(runtime, Runtime):
        raise TypeError("serve() takes an instance of a skillspec_kit.Runtime subclass")
    wire = _take_over_stdio()
    _Session(runtime, wire).run()


# Importing the kit protects the protocol from the runtime's output at once (see the module
# documentation); set SKILLSPEC_KIT_NO_TAKEOVER=1 to import it without (for unit tests of the
# helpers, or to use ErrorMap elsewhere).
if os.environ.get("SKILLSPEC_KIT_NO_TAKEOVER") != "1":
    _take_over_stdio()
