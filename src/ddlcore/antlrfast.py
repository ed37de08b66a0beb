"""Faster lexing, token access and tree building for generated ANTLR 4 parsers on the Python
runtime, with the same results.

Owns: turning one statement's text into the exact token list the generated ANTLR lexer
produces, with a tight loop over the lexer's own DFA (the prediction cache the runtime fills)
(``FastLexing``); a token stream over that finished list whose ``LT``/``LA``/``consume``/
``seek`` are O(1) (``FilledTokenStream``); a subclass of a generated parser whose per-token and
per-rule runtime methods skip their indirections, and generated contexts whose constructor and
child accessors are plain code (``fast_parser_class``).
Must not know: any dialect or grammar.

Why (docs/architecture.md, "Parsing speed"): on the Python runtime most of a parse is per-character
and per-token method calls rather than work: ``LexerATNSimulator.execATN`` calls ``LA``,
``consume``, ``getExistingTargetState``, ``captureSimState`` and ``DFAState.__eq__`` for every
character; ``Parser.match``/``consume`` go through ``getCurrentToken``, the error strategy and
``TerminalNodeImpl.__setattr__`` for every token; every ``ctx.x()`` runs a generator.
``tokenize`` walks the same DFA with the same rules:

* the DFA (``lexer._interp.decisionToDFA``) is the runtime's, shared by every lexer of the
  grammar; an edge that is not there yet (first sight of a character in a state, a character
  above U+007F, which the runtime never caches) is computed by the runtime's own
  ``LexerATNSimulator.computeTargetState``, which adds it to the DFA as usual (in a
  case-insensitive grammar an edge on one case of a letter is the edge on the other);
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
lexer (on the corpora, edge cases and a cold DFA), equal parse trees and syntax errors, and
every fast accessor against ``ParserRuleContext``'s own.
"""

from __future__ import annotations

from typing import Any

from antlr4 import CommonTokenStream
from antlr4.atn.ATNState import ATNState
from antlr4.atn.LexerAction import LexerChannelAction, LexerSkipAction, LexerTypeAction
from antlr4.atn.LexerATNSimulator import LexerATNSimulator
from antlr4.atn.Transition import Transition
from antlr4.error.ErrorStrategy import BailErrorStrategy, DefaultErrorStrategy
from antlr4.error.Errors import IllegalStateException
from antlr4.Parser import Parser
from antlr4.ParserRuleContext import ParserRuleContext
from antlr4.tree.Tree import TerminalNode, TerminalNodeImpl
from antlr4.InputStream import InputStream
from antlr4.Token import CommonToken, Token

__all__ = ["FastLexing", "FilledTokenStream", "fast_parser_class"]

_EOF = Token.EOF
_DEFAULT_CHANNEL = Token.DEFAULT_CHANNEL
_MAX_EDGE = LexerATNSimulator.MAX_DFA_EDGE
if LexerATNSimulator.MIN_DFA_EDGE != 0:  # pragma: no cover - edges[t] is the edge on code point t
    raise ImportError("ddlcore.antlrfast expects LexerATNSimulator.MIN_DFA_EDGE == 0 (ANTLR 4.13)")
_ERROR = LexerATNSimulator.ERROR
_SKIP = -3  # Lexer.SKIP
_PREDICATES = (Transition.PREDICATE, Transition.PRECEDENCE)
_new = object.__new__
_LETTERS = frozenset(range(ord("A"), ord("Z") + 1)) | frozenset(range(ord("a"), ord("z") + 1))


class _TextStream(InputStream):
    """An ``InputStream`` whose code points are built in one C call: the bytes of an ASCII
    text (indexing bytes gives the code point), else ``list(map(ord, text))``."""

    __slots__ = ()

    def _loadString(self) -> None:  # noqa: N802 - the runtime's name
        text = self.strdata
        self._index = 0
        self.data = text.encode("ascii") if text.isascii() else list(map(ord, text))
        self._size = len(text)


_case_cache: dict[int, tuple[Any, bool]] = {}
_model_cache: dict[int, tuple[Any, bool]] = {}


def _modelled(atn: Any) -> bool:
    """Whether ``tokenize`` models everything the lexer ATN uses: one mode, actions
    ``channel``/``type``/``skip`` only, no semantic predicates."""
    if len(atn.modeToStartState) != 1:
        return False
    for action in atn.lexerActions or ():
        if type(action) not in (LexerChannelAction, LexerTypeAction, LexerSkipAction):
            return False
    return not any(tr.serializationType in _PREDICATES
                   for state in atn.states if state is not None for tr in state.transitions)


def _case_insensitive(atn: Any) -> bool:
    """Whether no transition of ``atn`` tells an ASCII letter from its other case.

    A transition matches the characters of its label (atom, range, set; a not-set matches
    the others, which is symmetric when the set is); a wildcard matches all.  Labels with the
    same intervals are checked once."""
    got = _case_cache.get(id(atn))
    if got is not None and got[0] is atn:
        return got[1]
    checked: dict[tuple, bool] = {}
    result = True
    for state in atn.states:
        if state is None or not result:
            continue
        for tr in state.transitions:
            if tr.isEpsilon or tr.label is None:  # epsilon-like, wildcard
                continue
            key = tuple(tr.label.intervals)
            ok = checked.get(key)
            if ok is None:
                letters = {c for r in key for c in range(max(r.start, 65), min(r.stop, 123))
                           if c in _LETTERS}
                ok = checked[key] = all(c ^ 0x20 in letters for c in letters)
            if not ok:
                result = False
                break
    _case_cache[id(atn)] = (atn, result)
    return result


class FastLexing:
    """The DFA walk for one lexer instance (``for_lexer``); ``tokenize(text)`` gives its
    tokens."""

    def __init__(self, lexer: Any):
        self.lexer = lexer
        self.sim: LexerATNSimulator = lexer._interp
        self.dfa = self.sim.decisionToDFA[lexer.DEFAULT_MODE]
        #: per LexerActionExecutor: (type or None, channel or None, skip)
        self._actions: dict[Any, tuple[int | None, int | None, bool]] = {}
        #: every transition of the lexer's ATN matches an ASCII letter exactly when it matches
        #: the letter's other case (``options { caseInsensitive = true; }``): a DFA edge on one
        #: case is then the edge on the other, and is shared instead of computed again
        self.case_insensitive = _case_insensitive(self.sim.atn)

    @classmethod
    def for_lexer(cls, lexer: Any) -> "FastLexing | None":
        """A ``FastLexing`` for ``lexer`` (a generated ANTLR lexer), or ``None`` when its
        grammar uses lexer features the fast loop does not model: more than one mode, actions
        other than ``channel``/``type``/``skip``, or semantic predicates."""
        atn = lexer._interp.atn
        got = _model_cache.get(id(atn))
        if got is None or got[0] is not atn:
            got = _model_cache[id(atn)] = (atn, _modelled(atn))
        return cls(lexer) if got[1] else None

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
        input_ = _TextStream(text)
        lexer.inputStream = input_
        source = lexer._tokenFactorySourcePair
        data = input_.data
        n = len(data)
        tokens: list[CommonToken] = []
        append = tokens.append
        actions = self._actions
        compute = sim.computeTargetState
        fold = self.case_insensitive
        sim.mode = lexer.DEFAULT_MODE
        pos = 0
        line = 1
        line_start = 0  # index of the first character of the current line
        while pos < n:
            s = s0
            i = pos
            accept = None
            accept_at = pos
            while i < n:
                t = data[i]
                edges = s.edges
                if edges is None or t > _MAX_EDGE or (target := edges[t]) is None:
                    if fold and edges is not None and t in _LETTERS and edges[t ^ 0x20] is not None:
                        # case-insensitive grammar: 'a' goes where 'A' goes (checked on the ATN)
                        target = edges[t] = edges[t ^ 0x20]
                    else:
                        input_._index = i
                        sim.startIndex = pos
                        target = compute(input_, s, t)
                if target is _ERROR:
                    break
                i += 1
                if target.isAcceptState:
                    accept = target
                    accept_at = i
                s = target
            else:  # end of text: EOF edges are never cached
                input_._index = i
                sim.startIndex = pos
                while (target := compute(input_, s, _EOF)) is not _ERROR:
                    if target.isAcceptState:
                        accept = target
                        accept_at = i
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
            if k == -1:  # LB(1), exitRule's ctx.stop
                i = self.index - 1
                tokens = self.tokens
                while i >= 0 and tokens[i].channel != self.channel:
                    i -= 1
                return None if i < 0 else tokens[i]
            return None if k == 0 else self.LB(-k)
        i = self.index
        nxt = self._next
        last = len(self.tokens) - 1
        for _ in range(k - 1):
            if i < last:
                i = nxt[i + 1]
        return self.tokens[i]

    def LB(self, k: int):  # noqa: N802 - the runtime's name
        i = self.index
        if k == 0 or i - k < 0:
            return None
        tokens = self.tokens
        channel = self.channel
        for _ in range(k):
            i -= 1
            while i >= 0 and tokens[i].channel != channel:
                i -= 1
        return None if i < 0 else tokens[i]

    def LA(self, i: int) -> int:  # noqa: N802 - the runtime's name
        if i == 1:
            return self.tokens[self.index].type
        tok = self.LT(i)
        return 0 if tok is None else tok.type


_PLAIN_STRATEGIES = (BailErrorStrategy, DefaultErrorStrategy)
_set_node_parent = TerminalNodeImpl.parentCtx.__set__
_set_node_symbol = TerminalNodeImpl.symbol.__set__


class _FastParserMixin:
    """The per-token and per-rule methods of ``antlr4.Parser`` without their indirections.

    Same effects as the runtime's ``match``/``consume``/``enterRule``/``exitRule``/
    ``enterOuterAlt`` when the parser builds a tree and has no parse listeners (ddlcore's case);
    otherwise the runtime's methods run.  ``state`` is a plain attribute instead of the
    runtime's property (generated code sets it before every element), with ``_stateNumber``
    an alias of it for the runtime code that reads that slot."""

    state = -1

    @property
    def _stateNumber(self) -> int:  # noqa: N802 - the runtime's name
        return self.state

    @_stateNumber.setter
    def _stateNumber(self, value: int) -> None:  # noqa: N802
        self.state = value

    def match(self, ttype: int):
        inp = self._input
        t = inp.LT(1)
        if t.type != ttype or self._parseListeners or not self.buildParseTrees:
            return Parser.match(self, ttype)
        eh = self._errHandler
        if type(eh) in _PLAIN_STRATEGIES:  # reportMatch → endErrorCondition
            eh.errorRecoveryMode = False
            eh.lastErrorStates = None
            eh.lastErrorIndex = -1
        else:
            eh.reportMatch(self)
        self.consume()
        return t

    def consume(self):
        if self._parseListeners or not self.buildParseTrees:
            return Parser.consume(self)
        inp = self._input
        o = inp.LT(1)
        if o.type != _EOF:
            inp.consume()
        ctx = self._ctx
        if self._errHandler.inErrorRecoveryMode(self):
            ctx.addErrorNode(o)
        else:
            node = _new(TerminalNodeImpl)
            _set_node_parent(node, ctx)
            _set_node_symbol(node, o)
            children = ctx.children
            if children is None:
                ctx.children = [node]
            else:
                children.append(node)
        return o

    def enterRule(self, localctx, state: int, ruleIndex: int):  # noqa: N802,N803
        if self._parseListeners is not None or not self.buildParseTrees:
            return Parser.enterRule(self, localctx, state, ruleIndex)
        self.state = state
        self._ctx = localctx
        localctx.start = self._input.LT(1)
        parent = localctx.parentCtx
        if parent is not None:
            parent.addChild(localctx)

    def exitRule(self):  # noqa: N802
        if self._parseListeners is not None:
            return Parser.exitRule(self)
        ctx = self._ctx
        ctx.stop = self._input.LT(-1)
        self.state = ctx.invokingState
        self._ctx = ctx.parentCtx

    def enterOuterAlt(self, localctx, altNum: int):  # noqa: N802,N803
        localctx.setAltNumber(altNum)
        ctx = self._ctx
        if self.buildParseTrees and ctx is not localctx:
            parent = ctx.parentCtx
            if parent is not None:
                parent.removeLastChild()
                parent.addChild(localctx)
        self._ctx = localctx


class _FastRuleContext(ParserRuleContext):
    """The base the generated rule contexts get instead of ``ParserRuleContext``: its
    constructor in one frame instead of three, and its child accessors (what every generated
    ``ctx.x()`` calls) and ``getText`` as plain loops over ``children``: same results,
    without a generator or a ``StringIO`` per call."""

    __slots__ = ()

    def __init__(self, parent: Any = None, invokingStateNumber: int | None = None):  # noqa: N803
        self.parentCtx = parent
        self.invokingState = invokingStateNumber
        self.children = None
        self.start = None
        self.stop = None
        self.exception = None

    def getChild(self, i: int, ttype: type | None = None):  # noqa: N802
        children = self.children
        if ttype is None:
            return children[i] if len(children) > i else None
        if children is not None:
            for child in children:
                if isinstance(child, ttype):
                    if i == 0:
                        return child
                    i -= 1
        return None

    def getTypedRuleContext(self, ctxType: type, i: int):  # noqa: N802,N803
        children = self.children
        if children is not None:
            for child in children:
                if isinstance(child, ctxType):
                    if i == 0:
                        return child
                    i -= 1
        return None

    def getTypedRuleContexts(self, ctxType: type):  # noqa: N802,N803
        children = self.children
        if children is None:
            return []
        return [child for child in children if isinstance(child, ctxType)]

    def getToken(self, ttype: int, i: int):  # noqa: N802
        children = self.children
        if children is not None:
            for child in children:
                if isinstance(child, TerminalNode) and child.symbol.type == ttype:
                    if i == 0:
                        return child
                    i -= 1
        return None

    def getText(self) -> str:  # noqa: N802
        children = self.children
        if not children:
            return ""
        return "".join([child.getText() for child in children])

    def getTokens(self, ttype: int):  # noqa: N802
        children = self.children
        if children is None:
            return []
        return [child for child in children
                if isinstance(child, TerminalNode) and child.symbol.type == ttype]


def _speed_up_contexts(parser_cls: type) -> None:
    """Make ``_FastRuleContext`` the base of every generated rule context class of
    ``parser_cls`` that subclasses ``ParserRuleContext`` directly (labelled alternatives
    inherit it through their rule's class).  The classes are the dialect's own generated ones;
    ``ParserRuleContext`` itself is not touched."""
    for value in vars(parser_cls).values():
        if isinstance(value, type) and value.__bases__ == (ParserRuleContext,):
            value.__bases__ = (_FastRuleContext,)


_fast_classes: dict[type, type] = {}


def fast_parser_class(parser_cls: type) -> type:
    """A subclass of the generated ``parser_cls`` with ``_FastParserMixin``'s methods: the
    generated rule methods, contexts and ATN are the generated ones.  The generated context
    classes get ``_FastRuleContext`` as their base (in place, once)."""
    fast = _fast_classes.get(parser_cls)
    if fast is None:
        _speed_up_contexts(parser_cls)
        fast = _fast_classes[parser_cls] = type(parser_cls.__name__, (_FastParserMixin, parser_cls),
                                                {"__module__": parser_cls.__module__,
                                                 "__doc__": parser_cls.__doc__})
    return fast
