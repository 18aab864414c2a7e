"""The typed config of the findings stage: baselines, spike tests, how far back findings look."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from findings.stats import SpikeParams


class FindingsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    spikes: SpikeParams = Field(
        default_factory=SpikeParams,
        description="Baseline window, minimum samples, minimum lift and significance level.",
    )
    history_days: int = Field(
        30, ge=1, le=366, description="Days of earlier findings used for first-seen and trend."
    )
