"""The settings of the retrieval pipeline: :class:`RetrievalConfig`.

A handful of settings a caller commonly sets stay at the top (``top_k``, ``max_tokens``,
``encoding``, ``ranker``); every other one lives in a small group defined beside the stage
that reads it, each field documented there with what it does and why its default:

- ``task`` (:class:`~ctxfast.retrieval.task.TaskSettings`): what is left out of the queries;
- ``query`` (:class:`~ctxfast.retrieval.query.QueryConfig`): how the task is parsed;
- ``sources`` (:class:`~ctxfast.retrieval.sources.RecallSettings`): the recall sources;
- ``files`` (:class:`~ctxfast.retrieval.localize.FileSignals`): the file signals;
- ``bm25`` (:class:`~ctxfast.bm25.BM25Settings`): the BM25 parameters;
- ``rerank`` (:class:`~ctxfast.retrieval.rerank.RerankSettings`): the candidates' bonuses;
- ``demotions`` (:class:`~ctxfast.retrieval.rerank.Demotions`): tests, examples, ...;
- ``rules`` (:class:`~ctxfast.retrieval.rank_rules.RankRules`): the rank rules;
- ``prune`` (:class:`~ctxfast.retrieval.prune.PruneSettings`): the slice's line prune.

Every setting is also known by its older flat name (``RetrievalConfig(test_penalty=2)``,
``{"test_penalty": 2}``); the measurements behind the defaults are in ``benches/README.md``
("The measurements behind the settings' defaults"). The evaluation harness ablates a stage
by switching it off here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxfast import settings
from ctxfast.bm25 import BM25Settings
from ctxfast.errors import ConfigError
from ctxfast.retrieval.localize import FileSignals
from ctxfast.retrieval.prune import PruneSettings
from ctxfast.retrieval.query import QueryConfig
from ctxfast.retrieval.rank_rules import RankRules
from ctxfast.retrieval.rerank import Demotions, RerankSettings
from ctxfast.retrieval.sources import RecallSettings
from ctxfast.retrieval.task import TaskSettings

#: The orderings ``RetrievalConfig.ranker`` chooses between.
RANKERS = ("hand", "learned")


@settings.accept_flat_keywords("retrieval")
@dataclass(frozen=True)
class RetrievalConfig:
    """Every setting of retrieval (see the module doc for the groups)."""

    #: How many candidate definitions the result lists (20): enough to hold the function to
    #: change for most tasks while the slice stays readable. ``compose`` draws on more for a
    #: window unless the caller sets this (``DefaultsConfig.targets.retrieval_candidates``).
    top_k: int = 20
    #: The token cap of retrieval's own rendered slice (4,000): a slice an agent can read
    #: beside its other context.
    max_tokens: int = 4000
    #: The tokenizer tokens are counted with (``cl100k_base``, GPT-4's).
    encoding: str = "cl100k_base"
    #: How files and candidates are ordered: ``"hand"`` adds the normalised signals with the
    #: weights and bonuses below; ``"learned"`` scores the same evidence with a linear model
    #: (``ranker_model``). ``"hand"``: the trained model ranked about as well, not better.
    ranker: str = "hand"
    #: The learned ranker's model file; empty: the model shipped in the package.
    ranker_model: str = ""
    #: Keep the feature rows in ``RetrievalResult.features`` (training-data export). Off.
    keep_features: bool = False
    task: TaskSettings = field(default_factory=TaskSettings)
    query: QueryConfig = field(default_factory=QueryConfig)
    sources: RecallSettings = field(default_factory=RecallSettings)
    files: FileSignals = field(default_factory=FileSignals)
    bm25: BM25Settings = field(default_factory=BM25Settings)
    rerank: RerankSettings = field(default_factory=RerankSettings)
    demotions: Demotions = field(default_factory=Demotions)
    rules: RankRules = field(default_factory=RankRules)
    prune: PruneSettings = field(default_factory=PruneSettings)

    def __post_init__(self) -> None:
        if self.ranker not in RANKERS:
            raise ConfigError(f"ranker must be one of {', '.join(RANKERS)}, not {self.ranker!r}")

    @classmethod
    def from_mapping(cls, data: dict[str, Any] | None) -> RetrievalConfig:
        """A config with the given settings overridden, in nested form
        (``{"files": {"literals": False}}``), by their flat names (``{"literals": False}``)
        or both; an unknown name is a ``ConfigError``."""
        return settings.from_mapping(cls, data, "retrieval")

    def switches(self) -> list[str]:
        """The on/off stages the evaluation harness can ablate, by their flat names (feature
        export is no stage)."""
        return [
            name
            for name in settings.flat_names(type(self))
            if isinstance(settings.flat_value(self, name), bool) and name != "keep_features"
        ]
