"""Faster lexing and token access for generated ANTLR 4 parsers on the Python runtime.

Owns: turning one statement's text into the exact token list the generated ANTLR lexer
produces, with a tight loop over the lexer's own DFA (the prediction cache the runtime fills),
and a token stream over that finished list whose ``LT``/``LA``/``consume``/``seek`` are O(1).
Must not know: any dialect or grammar.

Why (DESIGN.md, "Performance facts"): on the Python runtime the lexer is the largest cost of a
parse, and most of it is per-character method calls (``LexerATNSimulator.execATN`` calls
``LA``, ``consume``, ``getExistingTargetState``, ``captureSimState`` and ``DFAState.__eq__``
for every character) rather than work.  ``tokenize`` walks the same DFA with the same rules:

* the DFA (``lexer._interp.decisionToDFA``) is the runtime's, shared by every lexer of the
  grammar; an edge that is not there yet (first sight of a character in a state, a character
  above U+007F, which the runtime never caches) is computed by the runtime's own
  ``LexerATNSimulator.computeTargetState``, which adds it to the DFA as usual;
* the longest match wins and, on equal length, the first rule (the DFA state's prediction), as
  in ``execATN``; lexer actions ``channel(...)``, ``type(...)`` and ``skip`` are applied;
* ``line``/``column`` of a token are those ``LexerATNSimulator.consume`` would count (a
  ``\\n`` starts a new line, every other character is one column).

A grammar whose lexer uses what this loop does not model (modes, ``more``, custom actions,
semantic predicates) is not accelerated: ``FastLexing.for_lexer`` returns ``None`` and the
caller uses the generated lexer as usual.  A statement with a lexical error is also handed back
(``tokenize`` returns ``None``) so the runtime reports the error exactly as it always does.

Written against ``antlr4-python3-runtime`` 4.13.2 (pinned with the tool that generates the
parsers); ``tests/core/test_antlrfast.py`` checks token-for-token equality with the runtime's
lexer on the corpora and on edge cases.
"""

from __future__ import annotations

from typing import Any

from antlr4 import CommonTokenStream
from antlr4.atn.ATNState import ATNState
from antlr4.atn.LexerAction import LexerChannelAction, LexerSkipAction, LexerTypeAction
from antlr4.atn.LexerATNSimulator import LexerATNSimulator
from antlr4.atn.Transition import Transition
from antlr4.error.Errors import IllegalStateException
from antlr4.InputStream import InputStream
from antlr4.Token import CommonToken, Token

__all__ = ["FastLexing", "FilledTokenStream"]

_EOF = Token.EOF
_DEFAULT_CHANNEL = Token.DEFAULT_CHANNEL
_MIN_EDGE = LexerATNSimulator.MIN_DFA_EDGE
_MAX_EDGE = LexerATNSimulator.MAX_DFA_EDGE
_ERROR = LexerATNSimulator.ERROR
_SKIP = -3  # Lexer.SKIP
_PREDICATES = (Transition.PREDICATE, Transition.PRECEDENCE)
_new = object.__new__


class FastLexing:
    """The DFA walk for one lexer instance (``for_lexer``); ``tokenize(text)`` gives its
    tokens."""

    def __init__(self, lexer: Any):
        self.lexer = lexer
        self.sim: LexerATNSimulator = lexer._interp
        self.dfa = self.sim.decisionToDFA[lexer.DEFAULT_MODE]
        #: per LexerActionExecutor: (type or None, channel or None, skip)
        self._actions: dict[Any, tuple[int | None, int | None, bool]] = {}

    @classmethod
    def for_lexer(cls, lexer: Any) -> "FastLexing | None":
        """A ``FastLexing`` for ``lexer`` (a generated ANTLR lexer), or ``None`` when its
        grammar uses lexer features the fast loop does not model: more than one mode, actions
        other than ``channel``/``type``/``skip``, or semantic predicates."""
        atn = lexer._interp.atn
        if len(atn.modeToStartState) != 1:
            return None
        for action in atn.lexerActions or ():
            if type(action) not in (LexerChannelAction, LexerTypeAction, LexerSkipAction):
                return None
        for state in atn.states:
            if state is None:
                continue
            for tr in state.transitions:
                if tr.serializationType in _PREDICATES:
                    return None
        return cls(lexer)

    def _action(self, executor: Any) -> tuple[int | None, int | None, bool]:
        got = self._actions.get(executor)
        if got is None:
            ttype = channel = None
            skip = False
            for a in executor.lexerActions:
                if type(a) is LexerChannelAction:
                    channel = a.channel
                elif type(a) is LexerTypeAction:
                    ttype = a.type
                else:  # LexerSkipAction (for_lexer admits nothing else)
                    skip = True
            got = self._actions[executor] = (ttype, channel, skip)
        return got

    def tokenize(self, text: str) -> tuple[InputStream, list[CommonToken]] | None:
        """``(input stream, tokens)`` for ``text``: the tokens (EOF last, ``tokenIndex`` set)
        that ``CommonTokenStream(lexer).fill()`` would hold, sourced from the lexer and the
        returned ``InputStream``.  ``None`` when the text has a lexical error or the DFA has no
        start state yet (the first statement): lex it with the runtime then."""
        dfa = self.dfa
        s0 = dfa.s0
        if s0 is None or s0.isAcceptState:  # not warmed up / zero-length tokens: runtime
            return None
        lexer = self.lexer
        sim = self.sim
        input_ = InputStream(text)
        lexer.inputStream = input_
        source = lexer._tokenFactorySourcePair
        data = input_.data
        n = len(data)
        tokens: list[CommonToken] = []
        append = tokens.append
        actions = self._actions
        compute = sim.computeTargetState
        sim.mode = lexer.DEFAULT_MODE
        pos = 0
        line = 1
        line_start = 0  # index of the first character of the current line
        nl = 10
        while pos < n:
            s = s0
            i = pos
            accept = None
            accept_at = pos
            while True:
                t = data[i] if i < n else _EOF
                edges = s.edges
                if edges is not None and _MIN_EDGE <= t <= _MAX_EDGE:
                    target = edges[t - _MIN_EDGE]
                    if target is None:
                        input_._index = i
                        sim.startIndex = pos
                        target = compute(input_, s, t)
                else:
                    input_._index = i
                    sim.startIndex = pos
                    target = compute(input_, s, t)
                if target is _ERROR:
                    break
                if t != _EOF:
                    i += 1
                if target.isAcceptState:
                    accept = target
                    accept_at = i
                    if t == _EOF:
                        break
                s = target
            if accept is None:
                return None  # lexical error: the runtime reports it
            ttype = accept.prediction
            channel = _DEFAULT_CHANNEL
            executor = accept.lexerActionExecutor
            if executor is not None:
                act = actions.get(executor) or self._action(executor)
                if act[2]:
                    ttype = _SKIP
                else:
                    if act[0] is not None:
                        ttype = act[0]
                    if act[1] is not None:
                        channel = act[1]
            if ttype != _SKIP:
                tok = _new(CommonToken)
                tok.source = source
                tok.type = ttype
                tok.channel = channel
                tok.start = pos
                tok.stop = accept_at - 1
                tok.tokenIndex = len(tokens)
                tok.line = line
                tok.column = pos - line_start
                tok._text = None
                append(tok)
            # line/column after the token, as LexerATNSimulator.consume counts them
            k = text.rfind("\n", pos, accept_at)
            if k != -1:
                line += text.count("\n", pos, accept_at)
                line_start = k + 1
            pos = accept_at
        input_._index = n
        eof = _new(CommonToken)
        eof.source = source
        eof.type = _EOF
        eof.channel = _DEFAULT_CHANNEL
        eof.start = n
        eof.stop = n - 1
        eof.tokenIndex = len(tokens)
        eof.line = line
        eof.column = n - line_start
        eof._text = None
        append(eof)
        sim.line = line
        sim.column = n - line_start
        return input_, tokens


class FilledTokenStream(CommonTokenStream):
    """A ``CommonTokenStream`` over a finished token list (EOF last) on ``channel``.

    Every on-channel lookup is precomputed, so ``LT(1)``, ``LA(1)``, ``consume`` and ``seek``
    cost one list index each; the parser and its prediction see exactly what
    ``CommonTokenStream`` would give them."""

    __slots__ = ("_next",)

    def __init__(self, lexer: Any, tokens: list[CommonToken], channel: int = Token.DEFAULT_CHANNEL):
        super().__init__(lexer, channel)
        self.tokens = tokens
        self.fetchedEOF = True
        # _next[i]: index of the first token at or after i on the channel (EOF always is)
        last = len(tokens) - 1
        nxt = [last] * (last + 2)
        j = last
        for i in range(last, -1, -1):
            if tokens[i].channel == channel:
                j = i
            nxt[i] = j
        self._next = nxt
        self.index = nxt[0]

    def lazyInit(self) -> None:
        return None

    def sync(self, i: int) -> bool:
        return i < len(self.tokens)

    def fetch(self, n: int) -> int:
        return 0

    def adjustSeekIndex(self, i: int) -> int:
        nxt = self._next
        return nxt[i] if i < len(nxt) else nxt[-1]

    def seek(self, index: int) -> None:
        nxt = self._next
        self.index = nxt[index] if index < len(nxt) else nxt[-1]

    def consume(self) -> None:
        i = self.index
        if self.tokens[i].type == _EOF:
            raise IllegalStateException("cannot consume EOF")
        self.index = self._next[i + 1]

    def LT(self, k: int):  # noqa: N802 - the runtime's name
        if k == 1:
            return self.tokens[self.index]
        if k <= 0:
            return None if k == 0 else self.LB(-k)
        i = self.index
        nxt = self._next
        last = len(self.tokens) - 1
        for _ in range(k - 1):
            if i < last:
                i = nxt[i + 1]
        return self.tokens[i]

    def LA(self, i: int) -> int:  # noqa: N802 - the runtime's name
        if i == 1:
            return self.tokens[self.index].type
        tok = self.LT(i)
        return 0 if tok is None else tok.type
