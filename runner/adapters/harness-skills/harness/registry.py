"""The harness product's tool registry, as seed 004 uses it (a stand-in: the product has its own).

It owns what every tool shares: the risk level a tool is registered with, the tool allowlist
(by default every tool below HIGH risk; a configured list replaces the default), argument checking
against the tool's signature, per-call human confirmation for tools at or above the `confirm`
level (refused when nobody can be asked: fail closed), and the tool-result truncation rule.
"""
import inspect

LOW, MEDIUM, HIGH = 1, 2, 3
LEVELS = {"low": LOW, "medium": MEDIUM, "high": HIGH}
RESULT_LIMIT = 262_144
"""The tool-result truncation rule's limit, in UTF-8 bytes."""


class ToolError(Exception):
    """A tool refused or failed: `code` names why (the model is shown the message)."""

    def __init__(self, code, message="", **fields):
        super().__init__(f"{code}: {message}" if message else code)
        self.code, self.message, self.fields = code, message, fields


class Registry:
    """Tools by name. `allow`: the tool allowlist (None: every tool below HIGH risk). `confirm`: the
    lowest risk level whose every call a human confirms. `ask(tool, args)`: asks the human, True to
    go ahead; None when the session is non-interactive."""

    def __init__(self, allow=None, confirm="high", ask=None, limit=RESULT_LIMIT):
        if confirm not in LEVELS:
            raise ValueError(f"confirm must be one of {', '.join(LEVELS)}, not {confirm!r}")
        self.allow = None if allow is None else set(allow)
        self.confirm, self.ask, self.limit = LEVELS[confirm], ask, limit
        self.tools = {}

    def tool(self, name, risk=LOW):
        """Decorator: registers `fn` as the tool `name` with that risk level."""

        def register(fn):
            self.tools[name] = (fn, risk)
            return fn

        return register

    def allowed(self, name):
        if name not in self.tools:
            return False
        return self.tools[name][1] < HIGH if self.allow is None else name in self.allow

    def offered(self):
        """The tools the model is offered, in registration order."""
        return [name for name in self.tools if self.allowed(name)]

    def call(self, name, args):
        """Runs the tool `name` with the model's `args` (a JSON object)."""
        if not self.allowed(name):
            raise ToolError("unknown_tool", f"no tool named {name!r}")
        fn, risk = self.tools[name]
        check_args(fn, args)
        if risk >= self.confirm:
            if self.ask is None:
                raise ToolError("no_human", f"{name} needs a human's confirmation and this session is non-interactive")
            try:
                yes = self.ask(name, args) is True
            except Exception:  # a confirmation that cannot be had is a no
                yes = False
            if not yes:
                raise ToolError("denied", f"the user declined this {name} call")
        return fn(**args)

    def truncate(self, text):
        """(text cut to at most `limit` UTF-8 bytes at a character boundary, whether it was cut)."""
        data = text.encode("utf-8", "surrogatepass")
        if len(data) <= self.limit:
            return text, False
        return data[: self.limit].decode("utf-8", "ignore"), True


def check_args(fn, args):
    """`args` must bind to `fn`'s parameters; a `str` parameter takes a string, any other annotated
    one a list of strings or null."""
    if not isinstance(args, dict):
        raise ToolError("invalid_args", "the arguments must be a JSON object")
    sig = inspect.signature(fn)
    try:
        bound = sig.bind(**args)
    except TypeError as e:
        raise ToolError("invalid_args", str(e)) from None
    for key, value in bound.arguments.items():
        want = sig.parameters[key].annotation
        if want is str and not isinstance(value, str):
            raise ToolError("invalid_args", f"{key} must be a string")
        strings = isinstance(value, list) and all(isinstance(v, str) for v in value)
        if want is not str and not (value is None or strings):
            raise ToolError("invalid_args", f"{key} must be a list of strings")
