from __future__ import annotations

import json

from judge_support import config, refund_session, reply, session, tool, user

from detectors.judge import judge_items
from detectors.judge.relevance import CUT, excerpt, token_set
from sessions.models import Event, EventKind


def test_a_reply_gets_what_the_agent_saw_before_it_in_session_order() -> None:
    s = session(
        [Event(EventKind.SYSTEM, text="You are a support assistant.")],
        user("Where is order ORD-1?"),
        tool("get_order", '{"order_id": "ORD-1", "status": "shipped"}', "c1"),
        reply("ORD-1 has shipped."),
        user("And ORD-2?"),
        tool("get_order", '{"order_id": "ORD-2", "status": "lost"}', "c2"),
        reply("ORD-2 is lost, sorry."),
    )
    first, second = judge_items(s, config())

    assert (first.reply_index, first.reply) == (4, "ORD-1 has shipped.")
    assert [(e.id, e.index, e.source, e.name) for e in first.evidence] == [
        ("E1", 1, "user_message", None),
        ("E2", 3, "tool_output", "get_order"),
    ]  # the system prompt is not evidence; nothing after the reply is
    assert [e.index for e in second.evidence] == [1, 3, 5, 7]
    assert second.evidence[3].text == '{"order_id": "ORD-2", "status": "lost"}'
    assert not second.truncated and second.dropped_items == 0
    assert (second.session_id, second.agent, second.agent_version) == ("s1", "support-bot", "v1")


def test_only_the_last_replies_with_text_are_judged() -> None:
    steps = [step for n in range(5) for step in (user(f"question {n}"), reply(f"answer {n}"))]
    s = session(*steps, [Event(EventKind.ASSISTANT, text="")])
    items = judge_items(s, config(max_replies_per_session=2))
    assert [i.reply for i in items] == ["answer 3", "answer 4"]


def test_sub_agent_steps_are_evidence_for_the_sub_agent_only() -> None:
    s = session(
        user("Check the build"),
        [Event(EventKind.USER, text="Run pytest in repo X", subagent="tester")],
        [Event(EventKind.TOOL_CALL, call_id="t1", name="Bash", subagent="tester")],
        [Event(EventKind.TOOL_RESULT, call_id="t1", output="3 failed", subagent="tester")],
        [Event(EventKind.ASSISTANT, text="3 tests failed", subagent="tester")],
        reply("All 12 tests pass."),
    )
    sub, main = judge_items(s, config())
    assert sub.subagent == "tester" and [e.index for e in sub.evidence] == [1, 3]
    assert main.subagent is None and [e.index for e in main.evidence] == [0]


def test_references_and_retrieved_context_are_evidence_with_their_sources() -> None:
    s = session(
        user("What is the return window?"),
        tool("search_docs", "hits: 1", "c1", retrieved_context=["Returns: 30 days from delivery."]),
        reply("You have 30 days to return it."),
    )
    facts = ["The return window is 30 days.", "Support hours: 9-17 CET."]
    (item,) = judge_items(s, config(), references=facts)
    by_source = {(e.source, e.index, e.text) for e in item.evidence}
    assert ("reference", None, "The return window is 30 days.") in by_source
    assert ("retrieved_context", 2, "Returns: 30 days from delivery.") in by_source
    assert ("tool_output", 2, "hits: 1") in by_source
    # reference facts first (they hold for the whole session), then the session in order
    assert [(e.id, e.source) for e in item.evidence] == [
        ("E1", "reference"),
        ("E2", "reference"),
        ("E3", "user_message"),
        ("E4", "tool_output"),
        ("E5", "retrieved_context"),
    ]


def test_safety_critical_agents_carry_their_domain() -> None:
    cfg = config(safety_critical={"support-bot": "financial"})
    assert judge_items(refund_session(), cfg)[0].domain == "financial"
    assert judge_items(refund_session(), config())[0].domain is None


def test_a_long_session_keeps_the_relevant_old_tool_output_and_records_truncation() -> None:
    noise = [
        tool(
            "list_faq", json.dumps({"faq": f"Topic {n}: " + "shipping takes days. " * 40}), f"n{n}"
        )
        for n in range(60)
    ]
    s = session(
        user("Refund order ORD-7781 please."),
        tool(
            "get_order", '{"order_id": "ORD-7781", "total": "$102.00", "paid": "2026-11-02"}', "c1"
        ),
        *noise,
        user("Thanks, and is it done?"),
        reply("Yes: ORD-7781 was refunded $102 on 2026-11-02."),
    )
    (item,) = judge_items(s, config(evidence_tokens=1500))

    kept = [e.index for e in item.evidence if e.index is not None]
    assert 2 in kept, "the old get_order output the reply rests on"
    assert kept == sorted(kept), "evidence is shown in session order"
    assert item.truncated and item.dropped_items > 40
    assert item.dropped_chars > 40 * 800
    sent = sum(len(e.text) + 60 for e in item.evidence)
    assert sent <= 1500 * 4
    assert s.events[-3].index in kept, "the latest user message ranks first among equals"


def test_a_very_long_item_is_excerpted_around_what_the_reply_mentions() -> None:
    rows = [f'{{"sku": "SKU-{n:05d}", "price": "${n % 90 + 10}.00"}}' for n in range(3000)]
    rows[1742] = '{"sku": "SKU-01742", "price": "$18.50", "stock": 0}'
    s = session(
        user("Is SKU-01742 in stock?"),
        tool("catalog_dump", "\n".join(rows), "c1"),
        reply("SKU-01742 costs $18.50 and is out of stock."),
    )
    (item,) = judge_items(s, config(evidence_tokens=2000))
    dump = next(e for e in item.evidence if e.name == "catalog_dump")
    assert dump.excerpted and item.truncated
    assert '{"sku": "SKU-01742", "price": "$18.50", "stock": 0}' in dump.text
    assert dump.text.startswith('{"sku": "SKU-00000"')  # the head says what the item is
    assert CUT.strip() in dump.text
    assert len(dump.text) <= 2000 * 4 // 3 + 10


def test_key_tokens_normalise_numbers_and_skip_plain_words() -> None:
    assert token_set("a refund of $1,200.00 for ORD-9 via get_order in src/app.py, Berlin") == {
        "1200",
        "ord-9",
        "get_order",
        "src/app.py",
        "berlin",
    }
    assert token_set("The refund was issued today.") == frozenset()


def test_excerpt_keeps_short_text_whole() -> None:
    assert excerpt("short text", {"x"}, 100) == "short text"


def test_a_readers_retrieval_step_is_retrieved_context_a_system_prompt_is_not() -> None:
    retrieval = Event(
        EventKind.SYSTEM,
        text="Returns: 30 days from delivery.",
        meta={"retrieval": True, "name": "kb_retriever"},
    )
    s = session(
        [Event(EventKind.SYSTEM, text="You are a support assistant.")],
        user("What is the return window?"),
        [retrieval],
        reply("You have 30 days to return it."),
    )
    (item,) = judge_items(s, config())
    assert [(e.source, e.index, e.text) for e in item.evidence] == [
        ("user_message", 1, "What is the return window?"),
        ("retrieved_context", 2, "Returns: 30 days from delivery."),
    ]
