"""Judge calibration: how often the LLM judge agrees with hand-labelled claims.

    load_cases(path)                      ->  list[LabelledCase]   (CalibrationSetError if bad)
    match_claims(human, judged)           ->  list[ClaimPair]      (matched, missed, extra)
    agreement(pairs)                      ->  AgreementReport
    format_report(report)                 ->  str                  (fixed-width table)

The labelled set (``tests/validation/claims.jsonl``, guidelines in its README) holds one case
per line: a reply, the evidence the agent saw, and the reply's factual claims with the label a
person gave each. ``halluwatch judge-eval`` runs the judge on every case, aligns the claims the
judge extracted with the human ones (``match_claims``), and reports agreement over all cases.

Matching is by text similarity, one-to-one and greedy by best score: a human claim the judge did
not extract is *missed*, a judge claim that matches no human claim is *extra*. Label agreement,
precision, recall, Cohen's kappa and the confusion matrix are over matched claims only, with the
human label as truth; missed and extra measure extraction, separately, per label.

Anything with ``.claim`` and ``.label`` string attributes can be matched (``ClaimLike``): the
human claims loaded here and whatever claim objects the judge returns.
"""

from __future__ import annotations

import difflib
import json
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

Label = Literal["supported", "partial", "unsupported", "contradicted"]
EvidenceSource = Literal["tool_output", "user_message", "retrieved_context", "reference"]
Domain = Literal["medical", "financial", "legal"]

LABELS: tuple[str, ...] = get_args(Label)
EVIDENCE_SOURCES: tuple[str, ...] = get_args(EvidenceSource)
DOMAINS: tuple[str, ...] = get_args(Domain)

# Default similarity a judge claim needs to count as the same claim as a human one.
MATCH_THRESHOLD = 0.5


# --------------------------------------------------------------------------------------------
# The labelled set


class ClaimLike(Protocol):
    """A claim with a label: a human claim from the set or a claim the judge extracted."""

    @property
    def claim(self) -> str: ...

    @property
    def label(self) -> str: ...


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Evidence(_Strict):
    """One piece of what the agent saw: a tool output, a user message, retrieved text, a fact."""

    source: EvidenceSource
    name: str | None = Field(None, description="Tool name for tool outputs; null otherwise.")
    text: str = Field(min_length=1)


class HumanClaim(_Strict):
    """One factual claim of the reply, as a person labelled it."""

    claim: str = Field(min_length=1, description="A short span or paraphrase of the claim.")
    label: Label
    note: str = Field(min_length=1, description="Why this label, for a human reader.")


class LabelledCase(_Strict):
    """A reply, the evidence behind it and its hand-labelled claims."""

    id: str = Field(min_length=1)
    agent: str = Field(min_length=1)
    domain: Domain | None = None
    evidence: list[Evidence]
    reply: str = Field(min_length=1)
    claims: list[HumanClaim] = Field(min_length=1)

    @field_validator("id", "agent", "reply")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a labelled-set file; ``line`` is 1-based, None for the whole file."""

    path: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.message}"


class CalibrationSetError(ValueError):
    """A labelled-set file that cannot be used; ``problems`` lists every bad line found."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


def _loc(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(line)"


# Fields whose unknown values get a message naming what is allowed.
_CHOICES: dict[str, tuple[str, tuple[str, ...]]] = {
    "label": ("label", LABELS),
    "source": ("evidence source", EVIDENCE_SOURCES),
    "domain": ("domain", (*DOMAINS, "null")),
}


def _describe(error: Any) -> str:
    """One pydantic error as `where: what`, naming the allowed values for unknown labels."""
    loc = tuple(error.get("loc", ()))
    where = _loc(loc)
    kind = error.get("type", "")
    field_name = str(loc[-1]) if loc else ""
    if kind == "literal_error" and field_name in _CHOICES:
        what, allowed = _CHOICES[field_name]
        given = error.get("input")
        return f"{where}: unknown {what} {given!r} (expected one of {', '.join(allowed)})"
    if kind == "missing":
        return f"{where}: missing field"
    if kind == "extra_forbidden":
        return f"{where}: unexpected field"
    return f"{where}: {error.get('msg', 'invalid')}"


def parse_case(line: str, *, path: str = "<string>", number: int = 1) -> LabelledCase:
    """One JSON line as a case; CalibrationSetError names ``path:number`` and what is wrong."""
    try:
        raw = json.loads(line)
    except json.JSONDecodeError as exc:
        raise CalibrationSetError(
            [Problem(path, number, f"not valid JSON: {exc.msg} (column {exc.colno})")]
        ) from None
    if not isinstance(raw, dict):
        raise CalibrationSetError(
            [Problem(path, number, f"expected a JSON object, got {type(raw).__name__}")]
        )
    try:
        case = LabelledCase.model_validate(raw)
    except ValidationError as exc:
        name = raw.get("id")
        prefix = f"case {name!r}: " if isinstance(name, str) and name else ""
        raise CalibrationSetError(
            [Problem(path, number, prefix + _describe(e)) for e in exc.errors()]
        ) from None
    seen: dict[str, int] = {}
    for index, claim in enumerate(case.claims):
        key = " ".join(_tokens(claim.claim))
        if key in seen:
            raise CalibrationSetError(
                [
                    Problem(
                        path,
                        number,
                        f"case {case.id!r}: claims[{index}] repeats claims[{seen[key]}] "
                        f"({claim.claim!r}); matching needs distinct claim texts",
                    )
                ]
            )
        seen[key] = index
    return case


def load_cases(path: str | Path) -> list[LabelledCase]:
    """Every case in a JSON Lines file (blank lines skipped), or one error listing all problems.

    Checked: each line is a JSON object of the case shape, labels and evidence sources are known
    values, no unexpected fields, claim texts are distinct within a case, ids are unique.
    """
    file = Path(path)
    where = str(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CalibrationSetError([Problem(where, None, "file not found")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CalibrationSetError([Problem(where, None, f"cannot read: {exc}")]) from None
    cases: list[LabelledCase] = []
    problems: list[Problem] = []
    first_line: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            case = parse_case(line, path=where, number=number)
        except CalibrationSetError as exc:
            problems.extend(exc.problems)
            continue
        if case.id in first_line:
            problems.append(
                Problem(
                    where,
                    number,
                    f"duplicate id {case.id!r} (first used on line {first_line[case.id]})",
                )
            )
            continue
        first_line[case.id] = number
        cases.append(case)
    if not cases and not problems:
        problems.append(Problem(where, None, "no cases (the file is empty)"))
    if problems:
        raise CalibrationSetError(problems)
    return cases


# --------------------------------------------------------------------------------------------
# Matching judge claims to human claims

_TOKEN = re.compile(r"[a-z0-9_]+(?:[.:][a-z0-9_]+)*")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_NUMBER_WORDS_TEXT = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty"
)
_NUMBER_WORDS = {word: str(value) for value, word in enumerate(_NUMBER_WORDS_TEXT.split())}
_STOPWORDS_TEXT = (
    "a an the is are was were be been being am of to in on at for by with and or that this these "
    "those it its as from has have had will would shall should can could may might do does did "
    "your you my our their i we they he she them his her which there here so than then into "
    "now also just"
)
_STOPWORDS = frozenset(_STOPWORDS_TEXT.split())


def _stem(word: str) -> str:
    """A crude stem, enough to let `passed`/`passes`/`pass` and `cancelled`/`cancel` meet."""
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    else:
        if word.endswith("es") and word[:-2].endswith(("s", "x", "z", "ch", "sh")):
            word = word[:-2]
        elif word.endswith("s") and not word.endswith("ss") and len(word) > 3:
            word = word[:-1]
    return word[:6]


def _tokens(text: str) -> list[str]:
    """Content tokens: lower-cased, stop words dropped, number words and forms unified."""
    text = _THOUSANDS.sub("", unicodedata.normalize("NFKC", text).lower())
    out: list[str] = []
    for token in _TOKEN.findall(text):
        token = _NUMBER_WORDS.get(token, token)
        if token in _STOPWORDS:
            continue
        if re.fullmatch(r"\d+(?:\.0+)?", token):
            token = token.split(".")[0].lstrip("0") or "0"
        elif not any(c.isdigit() for c in token):
            token = _stem(token)
        out.append(token)
    return out


def _has_digit(token: str) -> bool:
    return any(c.isdigit() for c in token)


def _weight(token: str) -> float:
    # Numbers and identifiers say more about which claim this is than ordinary words.
    return 2.0 if _has_digit(token) else 1.0


def similarity(a: str, b: str) -> float:
    """How alike two claim texts are, 0..1.

    A blend of token overlap (Dice and overlap coefficient over content tokens, numbers and
    identifiers weighted double) and difflib's ratio over the normalised token strings. When both
    texts hold numbers or identifiers and share none, the score is halved: `HAT204 departs at
    09:00` and `HAT216 departs at 17:00` are different claims however alike the words.
    """
    ta, tb = _tokens(a), _tokens(b)
    if not ta or not tb:
        return difflib.SequenceMatcher(None, a.lower().strip(), b.lower().strip()).ratio()
    sa, sb = set(ta), set(tb)
    common = sum(_weight(t) for t in sa & sb)
    wa, wb = sum(_weight(t) for t in sa), sum(_weight(t) for t in sb)
    dice = 2 * common / (wa + wb)
    overlap = common / min(wa, wb)
    ratio = difflib.SequenceMatcher(None, " ".join(ta), " ".join(tb)).ratio()
    score = 0.5 * dice + 0.3 * overlap + 0.2 * ratio
    na, nb = {t for t in sa if _has_digit(t)}, {t for t in sb if _has_digit(t)}
    if na and nb and not na & nb:
        score *= 0.5
    return min(1.0, score)


@dataclass(frozen=True)
class ClaimPair:
    """A human claim and the judge claim matched to it; one side is None if missed or extra."""

    human: ClaimLike | None
    judged: ClaimLike | None
    score: float = 0.0

    @property
    def status(self) -> Literal["matched", "missed", "extra"]:
        if self.human is not None and self.judged is not None:
            return "matched"
        return "missed" if self.human is not None else "extra"


def match_claims(
    human_claims: Sequence[ClaimLike],
    judged_claims: Sequence[ClaimLike],
    *,
    threshold: float = MATCH_THRESHOLD,
) -> list[ClaimPair]:
    """Align one reply's judge claims to its human claims, one-to-one, greedy by best score.

    Every pair scoring at least ``threshold`` is a candidate; the best remaining candidate is
    taken first (ties: earlier human claim, then earlier judge claim). Returns one pair per human
    claim in their order (``judged`` None when missed), then one pair per unmatched judge claim
    in its order (``human`` None: extra).
    """
    candidates: list[tuple[float, int, int]] = []
    for i, human in enumerate(human_claims):
        for j, judged in enumerate(judged_claims):
            score = similarity(human.claim, judged.claim)
            if score >= threshold:
                candidates.append((score, i, j))
    candidates.sort(key=lambda c: (-c[0], c[1], c[2]))
    to_judged: dict[int, tuple[int, float]] = {}
    taken: set[int] = set()
    for score, i, j in candidates:
        if i in to_judged or j in taken:
            continue
        to_judged[i] = (j, score)
        taken.add(j)
    pairs: list[ClaimPair] = []
    for i, human in enumerate(human_claims):
        if i in to_judged:
            j, score = to_judged[i]
            pairs.append(ClaimPair(human, judged_claims[j], score))
        else:
            pairs.append(ClaimPair(human, None))
    pairs.extend(
        ClaimPair(None, judged) for j, judged in enumerate(judged_claims) if j not in taken
    )
    return pairs


# --------------------------------------------------------------------------------------------
# Agreement


@dataclass(frozen=True)
class LabelStats:
    """One label's row. ``human``/``judged``/``agreed`` count matched claims only."""

    label: str
    human: int  # matched claims a person gave this label
    judged: int  # matched claims the judge gave this label
    agreed: int  # matched claims both gave this label
    missed: int  # human claims with this label the judge did not extract
    extra: int  # judge claims with this label that match no human claim

    @property
    def precision(self) -> float | None:
        """Of the matched claims the judge gave this label, the share a person did too."""
        return self.agreed / self.judged if self.judged else None

    @property
    def recall(self) -> float | None:
        """Of the matched claims a person gave this label, the share the judge did too."""
        return self.agreed / self.human if self.human else None


@dataclass(frozen=True)
class AgreementReport:
    """Judge against human labels over a set of claim pairs (see ``agreement``)."""

    labels: tuple[str, ...]
    per_label: dict[str, LabelStats]
    # confusion[human_label][judge_label] = matched claims; every label in `labels` is a key.
    confusion: dict[str, dict[str, int]]
    matched: int
    agreed: int
    missed: int
    extra: int
    kappa: float | None

    @property
    def human_total(self) -> int:
        """Every human claim: matched or missed."""
        return self.matched + self.missed

    @property
    def judged_total(self) -> int:
        """Every judge claim: matched or extra."""
        return self.matched + self.extra

    @property
    def agreement(self) -> float | None:
        """Share of matched claims with the same label; None when nothing matched."""
        return self.agreed / self.matched if self.matched else None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready figures (for a `--json` output or a stored calibration run)."""
        return {
            "matched": self.matched,
            "agreed": self.agreed,
            "missed": self.missed,
            "extra": self.extra,
            "agreement": self.agreement,
            "kappa": self.kappa,
            "labels": {
                label: {
                    "human": s.human,
                    "judge": s.judged,
                    "agree": s.agreed,
                    "precision": s.precision,
                    "recall": s.recall,
                    "missed": s.missed,
                    "extra": s.extra,
                }
                for label, s in self.per_label.items()
            },
            "confusion": {human: dict(row) for human, row in self.confusion.items()},
        }


def _norm_label(label: str) -> str:
    return str(label).strip().lower()


def cohen_kappa(confusion: dict[str, dict[str, int]]) -> float | None:
    """Cohen's kappa of a square confusion matrix (rows: rater A, columns: rater B).

    kappa = (p_o - p_e) / (1 - p_e), p_o the observed agreement, p_e the agreement expected from
    each rater's label shares. None when undefined: no claims, or p_e = 1 (both raters used one
    and the same label for everything).
    """
    labels = list(confusion)
    n = sum(sum(row.values()) for row in confusion.values())
    if n == 0:
        return None
    observed = sum(confusion[k].get(k, 0) for k in labels) / n
    rows = {k: sum(confusion[k].values()) for k in labels}
    cols = {k: sum(confusion[r].get(k, 0) for r in labels) for k in labels}
    expected = sum(rows[k] * cols[k] for k in labels) / (n * n)
    if expected >= 1.0:
        return None
    return (observed - expected) / (1 - expected)


def agreement(pairs: Iterable[ClaimPair]) -> AgreementReport:
    """Per-label counts, precision and recall, agreement, kappa and confusion over ``pairs``.

    Pairs from many replies can be passed together (the usual call: every case's pairs). Labels
    are compared stripped and lower-cased; a label outside ``LABELS`` (say a judge that answered
    `unverifiable`) gets its own row and column, after the four known ones.
    """
    pairs = list(pairs)
    matched: list[tuple[str, str]] = []
    missed: Counter[str] = Counter()
    extra: Counter[str] = Counter()
    for pair in pairs:
        if pair.human is not None and pair.judged is not None:
            matched.append((_norm_label(pair.human.label), _norm_label(pair.judged.label)))
        elif pair.human is not None:
            missed[_norm_label(pair.human.label)] += 1
        elif pair.judged is not None:
            extra[_norm_label(pair.judged.label)] += 1
    seen = {label for both in matched for label in both} | set(missed) | set(extra)
    labels = LABELS + tuple(sorted(seen - set(LABELS)))
    confusion = {h: dict.fromkeys(labels, 0) for h in labels}
    for human, judged in matched:
        confusion[human][judged] += 1
    per_label = {
        label: LabelStats(
            label=label,
            human=sum(confusion[label].values()),
            judged=sum(confusion[h][label] for h in labels),
            agreed=confusion[label][label],
            missed=missed[label],
            extra=extra[label],
        )
        for label in labels
    }
    return AgreementReport(
        labels=labels,
        per_label=per_label,
        confusion=confusion,
        matched=len(matched),
        agreed=sum(1 for human, judged in matched if human == judged),
        missed=sum(missed.values()),
        extra=sum(extra.values()),
        kappa=cohen_kappa(confusion),
    )


# --------------------------------------------------------------------------------------------
# The table


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def format_report(report: AgreementReport, *, title: str = "Judge vs human labels") -> str:
    """The report as a fixed-width text table, for a terminal or a CI log."""
    width = max(12, *(len(label) for label in report.labels)) + 2
    kappa = "n/a" if report.kappa is None else f"{report.kappa:.3f}"
    lines = [
        title,
        f"human claims {report.human_total}, judge claims {report.judged_total}: "
        f"matched {report.matched}, missed {report.missed}, extra {report.extra}",
        f"agreement {report.agreed}/{report.matched} = {_pct(report.agreement)}"
        f"   Cohen's kappa {kappa}",
        "",
        f"{'label':<{width}}{'human':>7}{'judge':>7}{'agree':>7}{'precision':>11}{'recall':>8}"
        f"{'missed':>8}{'extra':>7}",
    ]
    for label in report.labels:
        s = report.per_label[label]
        lines.append(
            f"{label:<{width}}{s.human:>7}{s.judged:>7}{s.agreed:>7}{_pct(s.precision):>11}"
            f"{_pct(s.recall):>8}{s.missed:>8}{s.extra:>7}"
        )
    lines.append(
        f"{'all':<{width}}{report.matched:>7}{report.matched:>7}{report.agreed:>7}"
        f"{_pct(report.agreement):>11}{_pct(report.agreement):>8}{report.missed:>8}"
        f"{report.extra:>7}"
    )
    lines += [
        "",
        "confusion (matched claims; rows: human label, columns: judge label)",
    ]
    col = max(len(label) for label in report.labels) + 2
    corner = "human \\ judge"
    lines.append(f"{corner:<{width}}" + "".join(f"{lab:>{col}}" for lab in report.labels))
    for human in report.labels:
        row = report.confusion[human]
        lines.append(f"{human:<{width}}" + "".join(f"{row[j]:>{col}}" for j in report.labels))
    lines += [
        "",
        "human/judge/agree/precision/recall count matched claims (human label = truth);",
        "missed = human claims the judge did not extract; extra = judge claims matching none.",
    ]
    return "\n".join(lines)
