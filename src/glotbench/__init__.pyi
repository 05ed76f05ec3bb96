"""The public API's types for type checkers (PEP 561; `py.typed` beside it). `__init__.py` imports
these names lazily at run time (its `_LAZY`: `import glotbench` stays light for the CLI), which a type
checker reads as `Any`; here they are the real classes, so mypy holds a plugin written against
`from glotbench import Benchmark` to the contract (docs/extending.md). tests/test_contract.py holds
this file to `_LAZY`."""

from glotbench.errors import DataError as DataError
from glotbench.errors import GlotbenchError as GlotbenchError
from glotbench.errors import SpecError as SpecError
from glotbench.items import Item as Item
from glotbench.items import PublicItem as PublicItem
from glotbench.benchmarks.base import Benchmark as Benchmark
from glotbench.core import Dataset as Dataset
from glotbench.core import RunResult as RunResult
from glotbench.core import Sample as Sample
from glotbench.engine.evaluate import evaluate as evaluate
from glotbench.engine.evaluate import evaluate_async as evaluate_async
from glotbench.engine.options import RunOptions as RunOptions
from glotbench.extract import Extraction as Extraction
from glotbench.metrics import ItemScore as ItemScore
from glotbench.metrics import MacroMetric as MacroMetric
from glotbench.metrics import Metric as Metric
from glotbench.metrics import MissingStatistic as MissingStatistic
from glotbench.metrics import RatioMetric as RatioMetric
from glotbench.metrics.corpus import CorpusMetric as CorpusMetric
from glotbench.metrics.corpus import SacreMetric as SacreMetric
from glotbench.models.base import GenerateConfig as GenerateConfig
from glotbench.models.base import Model as Model
from glotbench.models.base import ModelBase as ModelBase
from glotbench.models.base import Prompt as Prompt
from glotbench.models.base import Response as Response
from glotbench.models.base import Usage as Usage
from glotbench.registry import get_benchmark as get_benchmark
from glotbench.registry import load_model as load_model
from glotbench.registry import register_benchmark as register_benchmark
from glotbench.registry import register_model as register_model
from glotbench.scoring import score_output as score_output

__version__: str
__all__: list[str]
