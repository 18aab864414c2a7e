from __future__ import annotations

import json

import pytest
from labelled_cases import load_cases
from tests_support import shared_path

from detectors.entities import extract
from detectors.faithfulness import FaithfulnessParams, check_reply, faithfulness, table_columns
from detectors.runner import DetectorSuite
from sessions.models import Event, EventKind, Session
from sessions.reader import SessionReader

CASES = load_cases("faithfulness.jsonl")
REAL = ["CASE-00123", "CASE-00145", "CASE-00178", "CASE-00201", "CASE-00233", "CASE-00256"]
INVENTED = ["CASE-00981", "CASE-01017", "CASE-00412"]


def _read(messages: list[dict[str, object]]) -> Session:
    raw = json.dumps({"id": "s1", "messages": messages}).encode()
    result = SessionReader().read_unit([("s.json", raw)])
    assert not result.failures
    return result.sessions[0]


def _tool_session(output: str, reply: str) -> Session:
    call = {"id": "c1", "type": "function", "function": {"name": "search_cases", "arguments": "{}"}}
    return _read(
        [
            {"role": "system", "content": "You are a support assistant."},
            {"role": "user", "content": "Which cases mention login failures?"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": output},
            {"role": "assistant", "content": reply},
        ]
    )


def test_enough_labelled_cases() -> None:
    assert len(CASES) >= 15
    assert sum(bool(c.expected) for c in CASES) >= 5
    assert sum(not c.expected for c in CASES) >= 8
    assert all(c.note for c in CASES)


def test_incident_regression_invented_case_ids() -> None:
    """The incident: six retrieved case ids, cited with invented ones in the same format."""
    output = json.dumps(
        {"results": [{"case_id": c, "subject": "SSO login loop", "status": "open"} for c in REAL]}
    )
    reply = (
        f"I found these related cases: {', '.join(REAL)}. In addition, {INVENTED[0]} was resolved "
        f"by resetting the SAML certificate, {INVENTED[1]} was escalated to the identity team, "
        f"and {INVENTED[2]} is a duplicate of {REAL[0]}."
    )
    session = _tool_session(output, reply)
    signals = faithfulness(session, FaithfulnessParams())
    assert sorted(s.value for s in signals) == sorted(INVENTED)
    assert not {s.value for s in signals} & set(REAL)
    assert all(s.events == [4] and str(s.severity) == "medium" for s in signals)
    assert "appears nowhere in what the agent saw" in signals[0].explanation
    audit = signals[0].data["audit"]
    assert audit["action"] == "quality.faithfulness_violation"
    assert audit["score"] == pytest.approx(6 / (6 + len(INVENTED)))
    assert audit["threshold"] == 0.9
    assert audit["per_kind_breakdown"] == {"case_id": {"supported": 6, "total": 9}}
    assert sorted(audit["unsupported_sample"]) == sorted(INVENTED)
    assert len(audit["response_excerpt"]) <= 300 and len(audit["context_excerpt"]) <= 300
    assert REAL[0] in audit["context_excerpt"]
    assert all("audit" not in s.data for s in signals[1:])


def test_suite_runs_it_with_kind_and_version() -> None:
    session = _tool_session(json.dumps({"case_id": "CASE-00123"}), "See CASE-00123, CASE-00999.")
    signals = [s for s in DetectorSuite().run(session) if s.kind == "faithfulness_violation"]
    assert [(s.value, s.detector, s.detector_version) for s in signals] == [
        ("CASE-00999", "faithfulness", 3)
    ]


def test_synthetic_and_compaction_replies_are_not_checked() -> None:
    session = _tool_session("nothing", "Cases CASE-00555 and CASE-00556.")
    session.events[-1].meta["synthetic"] = True
    assert faithfulness(session, FaithfulnessParams()) == []
    session.events[-1].meta = {"compaction": True}
    assert faithfulness(session, FaithfulnessParams()) == []


def test_reply_without_entities_has_no_audit() -> None:
    reply = Event(EventKind.ASSISTANT, index=0, text="Done, see line 12 of app.py in Python 3.11.")
    from detectors.faithfulness import _Context

    signals, audit = check_reply(reply, _Context(FaithfulnessParams()), FaithfulnessParams())
    assert signals == [] and audit is None


def test_context_is_only_what_came_before() -> None:
    session = _read(
        [
            {"role": "user", "content": "status?"},
            {"role": "assistant", "content": "It is CASE-00700."},
            {"role": "user", "content": "CASE-00700 is right"},
        ]
    )
    assert [s.value for s in faithfulness(session, FaithfulnessParams())] == ["CASE-00700"]


def test_threshold_and_tolerance_params() -> None:
    session = _tool_session(json.dumps({"active_users": 53}), "There are about 60 users.")
    assert [s.value for s in faithfulness(session, FaithfulnessParams())] == ["60 users"]
    assert faithfulness(session, FaithfulnessParams(tolerance=0.2)) == []
    assert faithfulness(session, FaithfulnessParams(threshold=0.0)) == []


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("CASE-00123 #48213 INC0012345", ["case_id"] * 3),
        ("SKU-4821-B and XPS-9530", ["sku", "sku"]),
        ("E1043, ERR_CONNECTION_REFUSED, 0x80070005", ["error_code"] * 3),
        (
            "12%, $1.2M, 1,234 incidents, Q3 2024, April 2026",
            ["percent", "money", "count"] + ["date"] * 2,
        ),
        ("Python 3.11, in 2024, line 157, SHA-256, UTF-8, 3 seconds, 5 of them", []),
    ],
)
def test_extraction_kinds(text: str, kinds: list[str]) -> None:
    assert [e.kind for e in extract(text)] == kinds


def test_normalised_forms_agree() -> None:
    assert extract("$1.2M")[0].value == extract("1,200,000 dollars")[0].value
    assert extract("12%")[0].norm == extract("12 percent")[0].norm
    assert extract("CASE-00123")[0].norm == extract("case 00123", context=True)[0].norm


def _summedits() -> list[dict[str, object]]:
    items: list[dict[str, object]] = []
    for name in ("summedits_sales_call.json", "summedits_sales_email.json"):
        items += json.loads(shared_path(f"corpus/faithfulness/{name}").read_text())
    return items


def test_summedits_false_alarms_are_rare() -> None:
    """Measured: 1 of 352 consistent summaries fires (0.3%; that one says 15% where the email
    says 20%), against 142 of 781 inconsistent ones (18%; recall is bounded to entity edits)."""
    from detectors.faithfulness import _Context

    params = FaithfulnessParams()
    fired = {0: 0, 1: 0}
    total = {0: 0, 1: 0}
    for item in _summedits():
        context = _Context(params)
        context.add(str(item["doc"]))
        reply = Event(EventKind.ASSISTANT, index=1, text=str(item["summary"]))
        label = int(item["label"])  # type: ignore[call-overload]
        total[label] += 1
        fired[label] += bool(check_reply(reply, context, params)[0])
    assert fired[1] / total[1] <= 0.02
    assert fired[0] / total[0] >= 0.12


def test_real_claude_code_sessions_restating_counts_are_quiet() -> None:
    folder = shared_path("corpus/claude_code/reliability")
    signals = []
    for path in sorted(folder.glob("*__transcript.jsonl")):
        result = SessionReader().read_unit([(path.name, path.read_bytes())])
        for session in result.sessions:
            signals += faithfulness(session, FaithfulnessParams())
    assert signals == []


def _values(output: str, reply: str) -> list[str]:
    return [s.value for s in faithfulness(_tool_session(output, reply), FaithfulnessParams())]


FLIGHTS = json.dumps(
    {
        "reservation_id": "JG7FMM",
        "flights": [
            {"flight_number": "HAT028", "price": 140},
            {"flight_number": "HAT277", "price": 101},
            {"flight_number": "HAT301", "price": 96},
        ],
        "passengers": [{"first_name": "Omar"}, {"first_name": "Fatima"}],
    }
)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("The new total price is $241.", []),  # 140 + 101: neighbouring prices of one output
        ("All three flights come to $337.", []),  # 140 + 101 + 96
        ("The new total price is $251.", ["$251"]),  # no run of prices adds up to it
        ("The flights cost $140 and $96, so $236 in all.", []),  # worked out in the reply
        ("The flights cost $140 and $96, so $246 in all.", ["$246"]),  # worked out wrongly
        ("Old price $725 - new price $503 = $222 back to you.", ["$725", "$503", "$222"]),
        ("For two passengers the first flight is $280.", []),  # 2 x $140, a count stated
        ("The first flight is $280.", ["$280"]),  # twice a price, but no count says so
    ],
)
def test_totals_a_reply_works_out(reply: str, expected: list[str]) -> None:
    """Customer-service agents add up prices: a total of neighbouring numbers of one JSON
    output, a sum or difference of the reply's own supported numbers, or an amount times a
    count the reply states is supported; the same arithmetic done wrong is not."""
    assert _values(FLIGHTS, reply) == expected


def test_a_total_worked_out_earlier_may_be_restated() -> None:
    function = {"name": "get_reservation", "arguments": "{}"}
    call = {"id": "c1", "type": "function", "function": function}
    session = _read(
        [
            {"role": "user", "content": "What do my flights cost?"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": FLIGHTS},
            {"role": "assistant", "content": "They cost $140 and $96: $236 together."},
            {"role": "user", "content": "And the total again?"},
            {"role": "assistant", "content": "The total is $236; the invented fee is $19."},
        ]
    )
    signals = faithfulness(session, FaithfulnessParams())
    assert [s.value for s in signals] == ["$19"]


def test_hex_literals_in_context_support_numbers() -> None:
    """Decompiled code says `i < 0x10`: "16 iterations" is read from it, "17" is not."""
    output = "for (local_10 = 0; local_10 < 0x10; local_10 = local_10 + 1) { get_rand(); }"
    assert _values(output, "The loop runs for 16 iterations.") == []
    assert _values(output, "The loop runs for 17 iterations.") == ["17 iterations"]


def test_year_serial_ids_and_labelled_codes() -> None:
    """`CLM-2025-07731`-style ids (prefix, year, serial) are read; a code the context holds as
    written supports the reply even where the context does not label it (`"sku": ...`)."""
    output = json.dumps(
        {"claims": [{"id": "CLM-2025-07702", "sku": "HO-JKT-M-NVY", "payout": 1200}]}
    )
    assert _values(output, "Claim CLM-2025-07702 covers SKU HO-JKT-M-NVY.") == []
    assert _values(output, "Claim CLM-2025-07731 covers SKU HO-JKT-M-NVY.") == ["CLM-2025-07731"]
    # Reported as the code the label names, as a person would look it up.
    assert _values(output, "Claim CLM-2025-07702 covers SKU HO-JKT-L-NVY.") == ["HO-JKT-L-NVY"]
    assert _values(output, "Claim CLM-2025-07702 covers SKU-88120.") == ["SKU-88120"]


PSQL = (
    "region | revenue   | orders\n"
    "-------+-----------+-------\n"
    "West   | 512340.10 | 4102\n"
    "East   | 771010.15 | 5877\n"
    "(2 rows)"
)


@pytest.mark.parametrize(
    ("output", "reply", "expected"),
    [
        # A column's total, from a psql table, a markdown table, CSV and tab-separated rows.
        (PSQL, "Q3 revenue was $1,283,350.25 from 9,979 orders.", []),
        (PSQL, "Q3 revenue was $1,338,350.25 from 9,979 orders.", ["$1,338,350.25"]),
        (PSQL, "Q3 revenue was $1,283,350.25 from 9,997 orders.", ["9,997 orders"]),
        ("| team | tickets |\n|---|---:|\n| Core | 120 |\n| Web | 75 |\n", "195 tickets", []),
        ('sku,units,amount\nA-1,4,"1,200.00"\nB-2,6,300.00\n', "10 units for $1,500.00", []),
        ("week\tincidents\nW1\t14\nW2\t9\n", "23 incidents over two weeks", []),
        # Columns are not mixed: revenue plus orders is no total.
        (PSQL, "That is 516,442.10 orders.", ["516,442.10 orders"]),
        # An approximate figure near a total, and one too far from it.
        (PSQL, "Roughly $1.3M in Q3.", []),
        (PSQL, "Roughly $1.6M in Q3.", ["$1.6M"]),
    ],
)
def test_totals_of_a_table_column(output: str, reply: str, expected: list[str]) -> None:
    assert _values(output, reply) == expected


def test_table_columns_read_rows_of_like_width() -> None:
    assert table_columns(PSQL) == [[512340.10, 771010.15], [4102.0, 5877.0]]
    # A rule line does not split a table; a header or text cell adds nothing; `(300)` and `-5`
    # are negative; a row of another width starts another table; prose is not a table.
    text = (
        "| item | amount |\n|:-----|-------:|\n| a | $1,200.50 |\n| b | (300) |\n| c | -5 |\n"
        "Totals below, by hand, for review.\n| x | 1 | 2 |\n| y | 3 | 4 |\n"
    )
    assert table_columns(text) == [[1200.5, -300.0, -5.0], [1.0, 3.0], [2.0, 4.0]]
    assert table_columns("Hello, world.\nWe met on 3, 4 and 5 May.") == []


@pytest.mark.parametrize(
    ("output", "reply", "expected"),
    [
        ("code=AADSTS50076 app=Outlook", "Both failed with error AADSTS50079.", ["AADSTS50079"]),
        ("code=AADSTS50076 app=Outlook", "Both failed with error AADSTS50076.", []),
        ("src/app.ts(3,20): error TS2307: Cannot find module", "Fix the TS2307 error first.", []),
        ("src/app.ts(3,20): error TS2307: Cannot find module", "It is error TS2304.", ["TS2304"]),
        # Unlabelled letters-and-digits are names and standards, not codes to check.
        ("{}", "Dates are ISO8601 and the card is an RTX4090.", []),
    ],
)
def test_vendor_error_codes_where_labelled(output: str, reply: str, expected: list[str]) -> None:
    assert _values(output, reply) == expected


def test_a_qualifier_opening_a_sentence() -> None:
    """`About 40 tickets.` is as approximate as `about 40 tickets`."""
    found = {e.raw: e.qualifier for e in extract("About 40 tickets. Under 5% churn. Over 9 users.")}
    assert found == {"40 tickets": "approx", "5%": "lt", "9 users": "gt"}


def test_model_numbers_with_letters_after_the_dash() -> None:
    """Cisco-style model numbers (`WS-C3850-24T`) are read and checked like the others."""
    output = json.dumps({"switches": [{"model": "WS-C3850-24T"}, {"model": "C9300-48P"}]})
    assert _values(output, "The stack has a WS-C3850-24T and a C9300-48P.") == []
    assert _values(output, "The stack has a WS-C3850-48T and a C9300-48P.") == ["WS-C3850-48T"]


def test_a_total_of_one_field_across_calls() -> None:
    """Two calls' like fields add up ("14 held at one broker, 9 at the other: 23 shipments")."""
    session = _read(
        [
            {"role": "user", "content": "How many shipments are held in customs?"},
            *_call_and_output("c1", '{"broker": "Livingston", "held_shipments": 14}'),
            *_call_and_output("c2", '{"broker": "Expeditors", "held_shipments": 9}'),
            {"role": "assistant", "content": "23 shipments are held: 14 and 9 at the two."},
        ]
    )
    assert faithfulness(session, FaithfulnessParams()) == []
    session.events[-1].text = "25 shipments are held: 14 and 9 at the two."
    assert [s.value for s in faithfulness(session, FaithfulnessParams())] == ["25 shipments"]


def _call_and_output(call_id: str, output: str) -> list[dict[str, object]]:
    call = {"id": call_id, "type": "function", "function": {"name": "holds", "arguments": "{}"}}
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": output},
    ]


@pytest.mark.parametrize(
    ("output", "reply", "expected"),
    [
        # A number naming a part of a document is no count ("Section 6.2 gives ...").
        ("Notice period: 10 days.", "Section 6.2 gives you 10 days' notice.", []),
        # `E-214`-style codes are read (and checked).
        ("Codes: E-201, E-204, E-209.", "Press reset; if E-214 shows, call support.", ["E-214"]),
        # "Up to $10,000" quotes a limit: a $5,000 cap does not support it.
        ("Reimbursement: up to $5,000 per lifetime.", "You can claim up to $10,000.", ["$10,000"]),
        ("Reimbursement: up to $5,000 per lifetime.", "You can claim up to $5,000.", []),
    ],
)
def test_document_references_codes_and_limits(output: str, reply: str, expected: list[str]) -> None:
    assert _values(output, reply) == expected


def test_a_document_quoted_twice_does_not_double_its_numbers() -> None:
    """The same cap in two outputs is one fact: `$5,000` twice is no `$10,000`."""
    document = "Family-building benefit: $5,000 per lifetime."
    session = _read(
        [
            {"role": "user", "content": "What is the benefit?"},
            *_call_and_output("c1", json.dumps({"results": [{"content": document}]})),
            *_call_and_output("c2", json.dumps({"hits": [{"text": document}]})),
            {"role": "assistant", "content": "The benefit covers $10,000 in total."},
        ]
    )
    assert [s.value for s in faithfulness(session, FaithfulnessParams())] == ["$10,000"]


def test_year_form_case_ids_and_emphasised_percentages_are_read_whole() -> None:
    # `CS-2024-00534` is one case id, not `CS-2024` (which every id of the format shares).
    found = [(e.kind, e.raw) for e in extract("CS-2024-00534 and CS-2024-00577, INC-00412")]
    assert found == [
        ("case_id", "CS-2024-00534"),
        ("case_id", "CS-2024-00577"),
        ("case_id", "INC-00412"),
    ]
    # Markdown emphasis around a percentage (`_15% off_`); a number inside a word is none.
    assert [e.raw for e in extract("_15% off_ when billed annually")] == ["15%"]
    assert [e.raw for e in extract("model x15% off")] == []


def test_invented_case_ids_in_the_same_format_as_the_real_ones_are_flagged() -> None:
    context = "Open cases: CS-2024-00417, CS-2024-00452 and CS-2024-00488."
    reply = "Your open cases are CS-2024-00417, CS-2024-00452, CS-2024-00488 and CS-2024-00534."
    events = [
        Event(EventKind.USER, text="List my cases."),
        Event(EventKind.TOOL_CALL, call_id="c1", name="search_cases", input={}),
        Event(EventKind.TOOL_RESULT, call_id="c1", output=context),
        Event(EventKind.ASSISTANT, text=reply),
    ]
    session = Session("s", "s.json", "openai_chat", events=events)
    session.reindex()
    found = [s.value for s in faithfulness(session, FaithfulnessParams())]
    assert found == ["CS-2024-00534"]


def test_totals_of_rows_a_database_driver_printed_are_supported() -> None:
    # `[('2026-03', 41), ('2026-04', 58)]`: a query's rows as Python prints them, a table.
    assert table_columns("[('2026-03', 41), ('2026-04', 58)]") == [[41.0, 58.0]]
    events = [
        Event(EventKind.USER, text="How many paid conversions in March and April 2026?"),
        Event(EventKind.TOOL_CALL, call_id="c1", name="run_sql", input={}),
        Event(EventKind.TOOL_RESULT, call_id="c1", output="[('2026-03', 41), ('2026-04', 58)]"),
        Event(EventKind.ASSISTANT, text="March and April 2026 had 99 paid conversions."),
    ]
    session = Session("s", "s.json", "openai_chat", events=events)
    session.reindex()
    assert faithfulness(session, FaithfulnessParams()) == []


def test_a_sub_agents_reply_is_not_checked() -> None:
    """A sub-agent answers its parent, not the user: its report is context for the parent's
    reply (which is checked), not a reply of its own."""
    session = _tool_session("nothing", "Found 6 call sites in 4 files (CASE-00555).")
    session.events[-1].subagent = "a1"
    assert faithfulness(session, FaithfulnessParams()) == []


@pytest.mark.parametrize(
    ("output", "reply", "expected"),
    [
        # A day of an ISO date is no figure: "15%" is not in `2024-05-15`, nor in its time.
        ('{"date": "2024-05-15", "at": "2024-05-15 15:00:00"}', "You get 15% off.", ["15%"]),
        ('{"discount_pct": 15, "date": "2024-05-15"}', "You get 15% off.", []),
        # A percentage the reply works out as a ratio of its supported figures, shown.
        (
            '{"disputes": 71, "settled": 6250}',
            "71 disputes out of 6,250 settled transactions: 71 / 6,250 = 1.14%.",
            [],
        ),
        (
            '{"disputes": 71, "settled": 6250}',
            "71 disputes and 6,250 settled transactions, a dispute rate of 1.14%.",
            ["1.14%"],
        ),
        (
            '{"disputes": 71, "settled": 6250}',
            "71 disputes out of 6,250 settled transactions: 71 / 6,250 = 1.4%.",
            ["1.4%"],
        ),
    ],
)
def test_dates_are_no_figures_and_ratios_shown_are_worked_out(
    output: str, reply: str, expected: list[str]
) -> None:
    assert _values(output, reply) == expected


def test_both_is_a_count_of_two() -> None:
    output = '{"prices": {"economy": 189, "business": 506}, "paid": 378}'
    reply = "Business for both passengers is $1,012; the difference is $1,012 - $378 = $634."
    assert _values(output, reply) == []
    assert _values(output, "Business for the passenger is $1,012.") == ["$1,012"]


def test_a_total_of_the_counts_of_one_word() -> None:
    """A workspace's test runs, one summary line each: the reply totals their `N passed`."""
    output = (
        "test result: ok. 86 passed; 0 failed; 2 ignored\n"
        "test result: ok. 34 passed; 0 failed; 0 ignored\n"
        "test result: ok. 12 passed; 0 failed; 0 ignored"
    )
    reply = "All 132 tests pass across the workspace, with 2 ignored."
    assert _values(output, reply) == []
    assert _values(output, reply.replace("132", "140")) == ["140 tests"]
