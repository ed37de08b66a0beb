"""``ddlcore.antlrfast``: the fast lexing loop and the filled token stream give exactly what the
ANTLR runtime gives (tokens, positions, parse trees), for every dialect installed."""

from __future__ import annotations

import pytest
from antlr4 import CommonTokenStream, InputStream

import ddlcore
from ddlcore.antlrfast import FastLexing, FilledTokenStream
from ddlcore.splitter import Statement

DIALECTS = ["mysql", "postgres"]

EDGE_CASES = [
    "", " ", "x", "\n", "a\r\nb\n\nc\n", "'unterminated", "/* open comment", "-- only a comment",
    "CREATE TABLE é (a int) -- ü\n", "CREATE TABLE t (a int) COMMENT 'naïve \U0001F600 ☃'",
    "`q``x` \"d\"\"q\" 1.5e3 .5 0x1F X'0A' b'01' _utf8'x' N'x' 1e 1.e5 .e",
    "select $$x$$, $a$ y $a$, E'\\n', U&'x', B'01' ::int[] @> !~* /* a /* b */ c */",
    "CREATE TABLE t (\n  a int,\n\tb varchar(10) DEFAULT 'x\ny'\n)\n", "\x00\x01 \x7f \x80 \uffff",
]


def _dialect(name):
    try:
        return ddlcore.get_dialect(name)
    except Exception as exc:  # noqa: BLE001 - DialectNotFound
        pytest.skip(f"dialect {name} not installed: {exc}")


def _texts(corpora, name):
    files = sorted((corpora / "accepted").rglob("*.sql"))
    if name == "mysql":
        files = [f for f in files if "postgres" not in str(f) and "pagila" not in str(f)
                 and "yugabyte" not in str(f)]
    else:
        files = [f for f in files if "mysql" not in str(f) and "test_db" not in str(f)]
    assert files, "no corpus files"
    texts = [f.read_text(encoding="utf-8", errors="replace") for f in files]
    parser = _dialect(name).parser()
    stmts = [s.text for t in texts for s in parser.split(t)]
    return EDGE_CASES + texts + stmts + EDGE_CASES


def _runtime_tokens(lexer_cls, text):
    lexer = lexer_cls(InputStream(text))
    lexer.removeErrorListeners()
    stream = CommonTokenStream(lexer)
    stream.fill()
    return stream.tokens


def _key(tokens):
    return [(t.type, t.channel, t.start, t.stop, t.line, t.column, t.tokenIndex, t.text)
            for t in tokens]


@pytest.mark.parametrize("name", DIALECTS)
def test_fast_tokens_equal_runtime_tokens(name, corpora):
    lexer_cls = _dialect(name).generated()[0]
    fast = FastLexing.for_lexer(lexer_cls(None))
    assert fast is not None, "the dialect's lexer should be accelerated"
    _runtime_tokens(lexer_cls, "x")  # the DFA has a start state from then on
    compared = 0
    for text in _texts(corpora, name):
        want = _runtime_tokens(lexer_cls, text)
        got = fast.tokenize(text)
        assert got is not None, f"fast lexing refused {text[:60]!r}"
        assert _key(got[1]) == _key(want), text[:200]
        assert got[1][-1].getInputStream() is got[0]
        compared += 1
    assert compared > 600


@pytest.mark.parametrize("name", DIALECTS)
def test_filled_stream_behaves_as_common_token_stream(name):
    lexer_cls = _dialect(name).generated()[0]
    text = "CREATE TABLE t ( /* c */ a int , -- x\n b text ) ;"
    ref = CommonTokenStream(lexer_cls(InputStream(text)))
    ref.fill()
    filled = FilledTokenStream(lexer_cls(InputStream(text)), _runtime_tokens(lexer_cls, text))
    ref.seek(0)
    for start in range(len(ref.tokens) + 2):
        ref.seek(start)
        filled.seek(start)
        assert ref.index == filled.index
        for k in (1, 2, 3, 7, 40, -1, -2):
            a, b = ref.LT(k), filled.LT(k)
            assert (a and a.tokenIndex) == (b and b.tokenIndex), (start, k)
            if k > 0:
                assert ref.LA(k) == filled.LA(k)
    ref.seek(0)
    filled.seek(0)
    while ref.LA(1) != -1:
        ref.consume()
        filled.consume()
        assert ref.index == filled.index
    with pytest.raises(Exception, match="cannot consume EOF"):
        filled.consume()


@pytest.mark.parametrize("name", DIALECTS)
def test_parse_trees_unchanged(name, corpora):
    """The trees the parser builds from the fast tokens equal those built from the runtime
    lexer's tokens (same text, same structure, same token positions)."""
    dialect = _dialect(name)
    parser = dialect.parser()
    lexer_cls, parser_cls, _ = dialect.generated()
    ref = parser_cls(None)
    ref.removeErrorListeners()
    entry = getattr(parser_cls, dialect.entry_rule)
    texts = _texts(corpora, name)
    n = 0
    for text in texts[len(EDGE_CASES):]:
        for stmt in parser.split(text):
            if not dialect.statement_filter.classify(stmt.text)[0]:
                continue
            try:
                tree = parser.parse_tree(stmt)
            except ddlcore.DdlParseError:
                continue
            ref.setTokenStream(CommonTokenStream(lexer_cls(InputStream(stmt.text))))
            want = entry(ref)
            assert tree.toStringTree(recog=ref) == want.toStringTree(recog=ref), stmt.text[:200]
            assert (tree.start.tokenIndex, tree.stop.tokenIndex) == (want.start.tokenIndex, want.stop.tokenIndex)
            n += 1
    assert n > 300


BROKEN = {
    "mysql": ["CREATE TABLE t (a int,)", "CREATE TABLE t (\n  a int\n  b int)", "ALTER TABLE t ADD",
              "CREATE TABLE `t` (a varchar(10) CHARACTER SET)", "DROP TABLE"],
    "postgres": ["CREATE TABLE t (a int,)", "CREATE TABLE t (\n  a int\n  b int)",
                 "ALTER TABLE t ADD COLUMN", "CREATE TABLE (a int)", "DROP TABLE",
                 "ALTER TABLE t ALTER COLUMN a TYPE"],
}


@pytest.mark.parametrize("name", DIALECTS)
def test_errors_equal_with_and_without_fast_lexing(name):
    """Syntax errors carry the same line, column, offending text and expected tokens whether
    the statement was lexed by the fast loop or by the generated lexer."""
    fast = _dialect(name).parser()
    slow = _dialect(name).parser()
    slow._fast_lexing = None
    fast.parse_tree("CREATE TABLE w (a int)")
    assert fast._fast_lexing is not None
    for text in BROKEN[name]:
        stmt = Statement(text, 3, 7, 2, 100)
        errors = []
        for p in (fast, slow):
            with pytest.raises(ddlcore.DdlParseError) as info:
                p.parse_tree(stmt)
            e = info.value
            errors.append((str(e), e.line, e.column, e.offending, e.expected, e.statement))
        assert errors[0] == errors[1], text


@pytest.mark.parametrize("name", DIALECTS)
def test_fast_tokens_equal_on_a_cold_dfa(name, corpora):
    """The fast loop fills a DFA of its own from nothing (edges computed by the runtime, or
    shared between the cases of a letter) and still gives the runtime lexer's tokens."""
    from antlr4.dfa.DFA import DFA

    lexer_cls = _dialect(name).generated()[0]
    shared = lexer_cls.decisionsToDFA
    lexer_cls.decisionsToDFA = [DFA(ds, i) for i, ds in enumerate(lexer_cls.atn.decisionToState)]
    try:
        lexer = lexer_cls(None)  # a lexer over the fresh DFA
    finally:
        lexer_cls.decisionsToDFA = shared
    fast = FastLexing.for_lexer(lexer)
    assert fast.case_insensitive
    assert fast.tokenize("x") is None  # no start state yet: the runtime lexes
    lexer.inputStream = InputStream("x")
    lexer.nextToken()
    for text in _texts(corpora, name):
        got = fast.tokenize(text)
        assert got is not None
        assert _key(got[1]) == _key(_runtime_tokens(lexer_cls, text)), text[:200]


def _walk(ctx):
    stack = [ctx]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(c for c in (node.children or ()) if hasattr(c, "children"))


def _tokens_text(ctx):
    return "".join(c.symbol.text if hasattr(c, "symbol") else _tokens_text(c) for c in (ctx.children or ()))


@pytest.mark.parametrize("name", DIALECTS)
def test_fast_accessors_equal_runtime_accessors(name, corpora):
    """Every generated context's accessors give what ``ParserRuleContext``'s own give."""
    from antlr4.ParserRuleContext import ParserRuleContext as PRC
    from antlr4.RuleContext import RuleContext

    dialect = _dialect(name)
    parser = dialect.parser()
    checked = 0
    for text in _texts(corpora, name)[len(EDGE_CASES):][:40]:
        for stmt in parser.split(text):
            if not dialect.statement_filter.classify(stmt.text)[0]:
                continue
            try:
                tree = parser.parse_tree(stmt)
            except ddlcore.DdlParseError:
                continue
            for node in _walk(tree):
                assert node.getText() == RuleContext.getText(node) == _tokens_text(node)
                kinds = {type(c) for c in node.children or ()}
                for kind in kinds:
                    assert node.getTypedRuleContexts(kind) == PRC.getTypedRuleContexts(node, kind)
                    for i in range(3):
                        assert node.getTypedRuleContext(kind, i) is PRC.getTypedRuleContext(node, kind, i)
                        assert node.getChild(i, kind) is PRC.getChild(node, i, kind)
                for ttype in {c.symbol.type for c in node.children or () if hasattr(c, "symbol")}:
                    assert node.getTokens(ttype) == PRC.getTokens(node, ttype)
                    for i in range(3):
                        assert node.getToken(ttype, i) is PRC.getToken(node, ttype, i)
                checked += 1
    assert checked > 1000


def test_case_insensitivity_is_read_from_the_transitions():
    from types import SimpleNamespace

    from antlr4.atn.ATNState import BasicState
    from antlr4.atn.Transition import AtomTransition, NotSetTransition, RangeTransition, SetTransition
    from antlr4.IntervalSet import IntervalSet

    from ddlcore.antlrfast import _case_insensitive

    def atn(*transitions):
        state = BasicState()
        state.transitions = list(transitions)
        return SimpleNamespace(states=[None, state])

    def chars(*ranges):
        s = IntervalSet()
        for a, b in ranges:
            s.addRange(range(ord(a), ord(b) + 1))
        return s

    target = BasicState()
    assert _case_insensitive(atn()) is True
    assert _case_insensitive(atn(SetTransition(target, chars(("A", "Z"), ("a", "z"))))) is True
    assert _case_insensitive(atn(SetTransition(target, chars(("A", "Z"))))) is False
    assert _case_insensitive(atn(AtomTransition(target, ord("a")))) is False
    assert _case_insensitive(atn(AtomTransition(target, ord("1")))) is True
    assert _case_insensitive(atn(RangeTransition(target, ord("a"), ord("z")))) is False
    assert _case_insensitive(atn(NotSetTransition(target, chars(("x", "x"), ("X", "X"))))) is True
    assert _case_insensitive(atn(NotSetTransition(target, chars(("x", "x"))))) is False


def test_lexers_using_what_the_loop_does_not_model_are_not_accelerated():
    from types import SimpleNamespace

    from antlr4.atn.ATNState import BasicState
    from antlr4.atn.LexerAction import LexerChannelAction, LexerCustomAction, LexerPushModeAction
    from antlr4.atn.Transition import PredicateTransition

    from ddlcore.antlrfast import _modelled

    plain = BasicState()

    def atn(modes=1, actions=(), transitions=()):
        state = BasicState()
        state.transitions = list(transitions)
        return SimpleNamespace(modeToStartState=[plain] * modes, lexerActions=list(actions),
                               states=[None, state])

    assert _modelled(atn(actions=[LexerChannelAction(1)]))
    assert not _modelled(atn(modes=2))
    assert not _modelled(atn(actions=[LexerPushModeAction(1)]))
    assert not _modelled(atn(actions=[LexerCustomAction(0, 0)]))
    assert not _modelled(atn(transitions=[PredicateTransition(plain, 0, 0, False)]))
