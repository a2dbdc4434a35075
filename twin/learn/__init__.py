"""Learn: the write path. `learn()` is the one path every source uses to teach the twin (seed 001); capture
decides new / duplicate / supersede / update for each candidate; the model extractor, the capture judge, the
sentence contract, import and export of memories, and browser interests.

Each name below is re-exported from the module that defines it (as `rq.worker` does); import from
the module itself where a test patches it."""

from twin.learn.capture import (
    CaptureResult,
    Supersession,
    candidate_sensitivity,
    number_change,
    related_memories,
    same_subject,
    supersede_reason,
    supersession_line,
)
from twin.learn.capture_judge import ComparisonAnswer, Judgement, judge
from twin.learn.import_lines import BadLine, bounded_lines, checked_row, json_type, line_notes, read_line, shown
from twin.learn.interest_topics import sites_of, topic_clusters
from twin.learn.interests import MIN_PAGES, cluster_with_model, interest_text, learn_interests
from twin.learn.learning import (
    Extraction,
    LearnResult,
    as_memories,
    compare_with_model,
    extract_for_learning,
    forget,
    forget_source,
    learn,
    learn_document,
    learned_line,
    source_type,
)
from twin.learn.model_extractor import (
    ExtractedMemory,
    ExtractionAnswer,
    ModelExtraction,
    coerce_kind,
    extract_with_model,
    speaker_note,
)
from twin.learn.sentence_contract import Fitted, fit_to_contract, person_words
from twin.learn.transfer import export_memories, import_memories

__all__ = [
    "MIN_PAGES",
    "BadLine",
    "CaptureResult",
    "ComparisonAnswer",
    "ExtractedMemory",
    "Extraction",
    "ExtractionAnswer",
    "Fitted",
    "Judgement",
    "LearnResult",
    "ModelExtraction",
    "Supersession",
    "as_memories",
    "bounded_lines",
    "candidate_sensitivity",
    "checked_row",
    "cluster_with_model",
    "coerce_kind",
    "compare_with_model",
    "export_memories",
    "extract_for_learning",
    "extract_with_model",
    "fit_to_contract",
    "forget",
    "forget_source",
    "import_memories",
    "interest_text",
    "json_type",
    "judge",
    "learn",
    "learn_document",
    "learn_interests",
    "learned_line",
    "line_notes",
    "number_change",
    "person_words",
    "read_line",
    "related_memories",
    "same_subject",
    "shown",
    "sites_of",
    "source_type",
    "speaker_note",
    "supersede_reason",
    "supersession_line",
    "topic_clusters",
]
