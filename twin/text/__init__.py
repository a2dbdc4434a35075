"""Text: pure functions on words and sentences (no store, no model): tokens and stop words, the sentence rules
of capture, the offline extractor and its third-person rewrite, relative dates, reported speech, secrets and
sensitivity, page kinds and private sites, query terms. Depends on the foundation alone.

Each name below is re-exported from the module that defines it (as `rq.worker` does); import from
the module itself where a test patches it."""

from twin.text.about import Subject
from twin.text.antecedents import MAX_MENTIONS, Antecedents
from twin.text.capture_rules import (
    DUPLICATE_JACCARD,
    EVENT_JACCARD,
    STOPWORDS,
    Relation,
    RelationKind,
    relate,
    token_jaccard,
    tokens,
    unworthy,
)
from twin.text.capture_slots import NAMED_ATTRIBUTES, Slot, is_state, read_slot, read_slots, slot_change, slot_of
from twin.text.extractor import KINDS, MAX_PER_CALL, Candidate, extract, split_sentences
from twin.text.page_kinds import site_kind, utility_page
from twin.text.private_sites import private_host, private_path, private_site, private_title
from twin.text.query_terms import fts_query
from twin.text.relative_dates import has_relative_date, resolve_dates
from twin.text.reported_speech import clean_speaker, report, reported
from twin.text.secret_fields import field_secrets, key_words, names_secret, random_looking, value_counts
from twin.text.secret_labels import keyword
from twin.text.secret_phrases import phrase_secrets, plausible_value
from twin.text.secret_request import asked_kinds, asks_for_sensitive, memory_kinds, only_what_was_asked
from twin.text.secret_shapes import (
    Found,
    bip39_checksum_ok,
    crypto_private_keys,
    is_list_word,
    seed_phrases,
    structural_secrets,
)
from twin.text.sensitivity import Secret, contains_secret, find_secrets, infer_sensitivity, redact, stricter
from twin.text.sentence_length import MIN_LENGTH, SCRIPT_WEIGHTS, script_length, too_short
from twin.text.structured_lines import spell_out
from twin.text.third_person import (
    english_first_person,
    first_to_third_person,
    language_of,
    looks_english,
    second_to_third_person,
)
from twin.text.third_person_de import looks_german
from twin.text.third_person_fr import looks_french

__all__ = [
    "NAMED_ATTRIBUTES",
    "Slot",
    "is_state",
    "read_slot",
    "read_slots",
    "slot_change",
    "slot_of",
    "DUPLICATE_JACCARD",
    "EVENT_JACCARD",
    "KINDS",
    "MAX_MENTIONS",
    "MAX_PER_CALL",
    "MIN_LENGTH",
    "SCRIPT_WEIGHTS",
    "STOPWORDS",
    "Antecedents",
    "Candidate",
    "Found",
    "Relation",
    "RelationKind",
    "Secret",
    "Subject",
    "asked_kinds",
    "asks_for_sensitive",
    "bip39_checksum_ok",
    "clean_speaker",
    "contains_secret",
    "crypto_private_keys",
    "english_first_person",
    "extract",
    "field_secrets",
    "find_secrets",
    "first_to_third_person",
    "fts_query",
    "has_relative_date",
    "infer_sensitivity",
    "is_list_word",
    "key_words",
    "keyword",
    "language_of",
    "looks_english",
    "looks_french",
    "looks_german",
    "memory_kinds",
    "names_secret",
    "only_what_was_asked",
    "phrase_secrets",
    "plausible_value",
    "private_host",
    "private_path",
    "private_site",
    "private_title",
    "random_looking",
    "redact",
    "relate",
    "report",
    "reported",
    "resolve_dates",
    "script_length",
    "second_to_third_person",
    "seed_phrases",
    "site_kind",
    "spell_out",
    "split_sentences",
    "stricter",
    "structural_secrets",
    "token_jaccard",
    "tokens",
    "too_short",
    "unworthy",
    "utility_page",
    "value_counts",
]
