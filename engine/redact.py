"""Find secrets in text that is about to leave ctxtui (a pack, a copy, an MCP answer); redact them.

detect-secrets (pinned) does the finding: each of its regex plugins for a token format (AWS,
GitHub, GitLab, Slack, Stripe, OpenAI, JWT, private keys, URLs with passwords, ...) runs over
the whole text in one pass of the regex engine, and its keyword detector (`password = "..."`)
looks only at the lines that hold a secret-sounding word, so an 8,000-token pack is scanned in
a few milliseconds. Its heuristic filters drop templates (`${TOKEN}`, `<your-key>`), references
(`password = get_password()`) and sequences. Our own patterns add only what it lacks: whole
private-key blocks (it flags the header line), GitHub fine-grained tokens, Google, Anthropic,
Hugging Face, npm, DigitalOcean and Shopify tokens, Stripe test keys. Its high-entropy and
public-IP detectors are left out: hashes, UUIDs and addresses in code are not secrets.

A value with "example" in it (AWS's documented AKIAIOSFODNN7EXAMPLE) or made of one repeated
character is a placeholder, not a secret.
"""

from __future__ import annotations

import bisect
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from engine.model import SecretFound

if TYPE_CHECKING:
    from re import Match, Pattern

MARKER = "[redacted: {kind}]"
"""What a secret becomes in the pack."""

MEMO_LIMIT = 2048
"""Texts whose redaction is remembered (a pack is re-rendered many times while it is fitted)."""

KEYWORDS = ("key", "pass", "pw", "token", "secret", "contrase")
"""Lower-case words one of which every assignment-style pattern needs on its line."""

WHOLE_TEXT = ()
"""No needle: the pattern is cheap enough to run over the whole text."""

DETECT_SECRETS_PLUGINS: tuple[tuple[str, str, tuple[tuple[str, ...], ...]], ...] = (
    (
        "aws:AWSKeyDetector",
        "AWS access key|AWS secret access key",
        (("A3T", "ABIA", "ACCA", "AKIA", "ASIA"), ("aws",)),
    ),
    ("artifactory:ArtifactoryDetector", "Artifactory token", (("AKC",), ("AP",))),
    ("azure_storage_key:AzureStorageKeyDetector", "Azure storage key", (("AccountKey=",),)),
    ("basic_auth:BasicAuthDetector", "password in a URL", (("://",),)),
    (
        "cloudant:CloudantDetector",
        "Cloudant credentials",
        (KEYWORDS, KEYWORDS, ("cloudant.com",), ("cloudant.com",)),
    ),
    ("discord:DiscordBotTokenDetector", "Discord bot token", (WHOLE_TEXT,)),
    (
        "github_token:GitHubTokenDetector",
        "GitHub token",
        (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),),
    ),
    (
        "gitlab_token:GitLabTokenDetector",
        "GitLab token",
        (
            ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-"),
            ("GR1348941",),
            ("glcbt-",),
            ("glimt-",),
            ("glptt-",),
            ("glagent-",),
            ("gloas-",),
        ),
    ),
    ("ibm_cloud_iam:IbmCloudIamDetector", "IBM Cloud API key", (KEYWORDS,)),
    ("ibm_cos_hmac:IbmCosHmacDetector", "IBM COS HMAC key", (KEYWORDS,)),
    ("jwt:JwtTokenDetector", "JSON web token", (("eyJ",),)),
    ("mailchimp:MailchimpDetector", "Mailchimp key", (("-us",),)),
    ("npm:NpmDetector", "npm token", (("_authToken",),)),
    ("openai:OpenAIDetector", "OpenAI key", (("T3BlbkFJ",),)),
    ("pypi_token:PypiTokenDetector", "PyPI token", (("pypi-",), ("pypi-",))),
    ("sendgrid:SendGridDetector", "SendGrid key", (("SG.",),)),
    ("slack:SlackDetector", "Slack token", (("xox",), ("hooks.slack.com",))),
    ("softlayer:SoftlayerDetector", "SoftLayer key", (KEYWORDS, ("api.softlayer.com",))),
    ("square_oauth:SquareOAuthDetector", "Square OAuth secret", (("sq0csp-",),)),
    ("stripe:StripeDetector", "Stripe key", (("k_live_",),)),
    (
        "telegram_token:TelegramBotTokenDetector",
        "Telegram bot token",
        (tuple(f"{digit}:" for digit in "0123456789"),),
    ),
    ("twilio:TwilioKeyDetector", "Twilio key", (("AC",), ("SK",))),
)
"""The detect-secrets plugins used (module:class under detect_secrets.plugins), what their finds
are called in the pack (`a|b` names each pattern in turn), and per pattern the needles: strings
one of which a line must hold before the pattern runs on it (lower-case needles are looked for
case-blind, for patterns that ignore case). Most of the patterns start with a class or an
alternation, which Python's regex engine tries at every position; running them only on the few
lines that hold a needle is what keeps a pack's scan within a few milliseconds."""

EXTRA_PATTERNS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("GitHub token", r"github_pat_[A-Za-z0-9_]{82}", WHOLE_TEXT),
    ("Google API key", r"AIza[0-9A-Za-z_\-]{35}", WHOLE_TEXT),
    ("Google OAuth secret", r"GOCSPX-[0-9A-Za-z_\-]{28}", WHOLE_TEXT),
    ("Anthropic key", r"sk-ant-(?:api|admin)\d\d-[A-Za-z0-9_\-]{80,}", WHOLE_TEXT),
    ("Hugging Face token", r"hf_[A-Za-z]{34}", WHOLE_TEXT),
    ("npm token", r"npm_[A-Za-z0-9]{36}", WHOLE_TEXT),
    ("DigitalOcean token", r"do[por]_v1_[a-f0-9]{64}", ("_v1_",)),
    ("Shopify token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", WHOLE_TEXT),
    ("Stripe key", r"(?:sk|rk)_test_[0-9a-zA-Z]{24,}", ("k_test_",)),
    (
        "AWS secret access key",
        r"(?i)aws_?secret_?(?:access_?)?key\s*[=:]\s*([0-9a-zA-Z/+]{40})(?![0-9a-zA-Z/+])",
        ("aws",),
    ),
    (
        "API key",
        r"(?i)[\w-]*api[-_ ]?key[\"']?\s*[:=]\s*[\"']([A-Za-z0-9_\-]{20,})[\"']",
        ("api",),
    ),
    ("password", r"\bmysql(?:dump|admin)?\b[^\n]*?\s-p(?!\s)([^\s'\"]{4,})", ("mysql",)),
    ("password", r"\bmachine\s+\S+\s+login\s+\S+\s+password\s+(\S+)", ("machine",)),
)
"""Formats detect-secrets 1.5 does not know: kind, regex, needles (as above). The last four
are secrets found by their place, not their shape: an unquoted AWS secret in an env file, an
API key in a header (`"X-Api-Key": "..."`, which its keyword list spells `api_key` only), a
MySQL password on a command line (`-pSECRET`), a `.netrc` line."""

PRIVATE_KEY_BLOCK = re.compile(
    r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----"
    r"(?:((?:(?!-----END |\x00).){1,20000}?)-----END \1PRIVATE KEY\2-----"
    r"|((?:\n[^\n]{0,16}?[A-Za-z0-9+/=]{32,}[^\n]{0,4})+))",
    re.DOTALL,
)
"""A private key block: its body up to the END line (several lines, or one line with `\\n`
escapes inside a JSON string), or, when the END line is not in the text (a cut excerpt), the
base64 lines that follow the header. The header and END lines stay: they say what was there."""

PLACEHOLDER = re.compile(r"example|^(.)\1*$|(.)\2{7,}", re.IGNORECASE)
"""Values that are documentation, not secrets: "example" in them, or one character repeated
(`ghp_xxxxxxxx...`, `********`); no random token repeats a character eight times running."""

KEYWORD_VALUE = re.compile(
    r"[^a-z0-9]*(?:password|passwd|pass|pwd|secret|token|api_?key|key|changeme|none|null|"
    r"user_?name|user|login|e_?mail)[^a-z0-9]*",
    re.IGNORECASE,
)
"""A keyword's value that is a keyword itself (`password == 'secret-' + user`), or names the
other credential field (hono: `const usernamePasswordInOptions = 'username' in options`)."""

IDENTIFIER = re.compile(r"[a-z]+(?:_[a-z]+)+|[a-z]+(?:[A-Z][a-z]+)+")
"""A keyword's value that is a name in code (`"password_confirmation"`, `"bearerToken"`)."""

SEPARATOR = "\n\x00\x00\n"
"""Between the texts of one scan: a line of NULs, which no pattern matches or crosses."""

WHOLE_TEXT_SHARE = 0.2
"""When more than this share of a text's lines hold a pattern's needle, the pattern runs
over the whole text at once (one call beats hundreds)."""

KEYWORD_LINE = re.compile(
    r"api_?key|auth_?key|service_?key|account_?key|db_?key|database_?key|priv_?key|"
    r"private_?key|client_?key|db_?pass|database_?pass|key_?pass|password|passwd|pwd|"
    r"secret|contrase[ñn]a",
    re.IGNORECASE,
)
"""detect-secrets' keyword list, to find the few lines its keyword detector must look at."""

PASSWORD_WORDS = re.compile(r"pass|pwd|contrase", re.IGNORECASE)
"""Keywords whose value is called a password rather than a secret."""

CONFIG_NAMES = re.compile(
    r"(^|/)(\.env[^/]*|[^/]*\.env|\.envrc|[^/]*\.(sh|bash|zsh|properties|ini|cfg|conf|cnf|toml"
    r"|ya?ml)|dockerfile|makefile)$",
    re.IGNORECASE,
)
"""Files whose assignments need no quotes (`PASSWORD=hunter2`): detect-secrets' config rules."""

DOTENV_LINE = re.compile(r"[ \t]*(?:export[ \t]+)?[A-Za-z_][A-Za-z0-9_]*=\S?")
"""A line of a dotenv file: `NAME=value`, no space before the `=` (code puts one there)."""
DOTENV_SHARE = 0.8
"""Share of a text's lines (blank and `#` lines aside) that must be `NAME=value` for it to be
read as a dotenv file whatever its name (a copy saved as `env.backup`, `dotenv`): its values
need no quotes either. Code and prose stay well below (an assignment among sentences)."""
DOTENV_HEAD = 4096
"""Characters of a text read to judge its shape (about a hundred lines of a dotenv file)."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One secret found in a text."""

    kind: str
    """What it is, as the pack says it: "AWS access key", "password", "private key"."""
    start: int
    """Offset of its first character in the scanned text."""
    end: int
    """Offset just past its last character."""


class Redactor(Protocol):
    """Anything that finds and redacts secrets in text (SecretScanner, or a stand-in)."""

    def redact_many(
        self, items: Sequence[tuple[str, str]]
    ) -> list[tuple[str, tuple[Finding, ...]]]:
        """For each (text, path): the redacted text and the findings (offsets in the text)."""
        ...


@dataclass(frozen=True, slots=True)
class SecretPolicy:
    """What a pack does with the secrets in its text: every part of it (each file at its
    level, the question, the instructions, the diff) goes through `apply` before it is
    formatted and counted, so the printed token total is that of the text that leaves."""

    scanner: Redactor
    """Finds the secrets."""
    redact: bool = True
    """Replace each secret with its marker; False leaves them in, and still reports them."""

    def apply(
        self, text: str, where: str, *, path: str = "", original: str = ""
    ) -> tuple[str, list[SecretFound]]:
        """Return `text` as the pack carries it, and the secrets found in it.

        Args:
            where: how a finding names the text's place (a repository path, `<question>`).
            path: the file name that decides the keyword rules ("" for free text).
            original: the whole file `text` was cut from (a focused level), so that a finding
                gives its line in the file as on disk; "" when `text` is the whole of it.
        """
        return self.apply_many([(text, where, path, original)])[0]

    def apply_many(
        self,
        parts: Sequence[tuple[str, str, str, str]],
        known: Sequence[tuple[Finding, ...]] = (),
    ) -> list[tuple[str, list[SecretFound]]]:
        """`apply` for many parts at once, (text, where, path, original) each: one scan of
        them all, so that a pack of twenty files pays each detector's cost once, not twenty
        times. `known[i]`, when given, are secrets of part i found otherwise (key lines of a
        diff without their BEGIN line: engine.diff_keys), added to the scan's."""
        results = self.scanner.redact_many([(text, path) for text, _, path, _ in parts])
        for number, extra in enumerate(known):
            if extra:
                text = parts[number][0]
                merged = _without_overlaps([*results[number][1], *extra])
                results[number] = (_replace(text, merged), merged)
        carried: list[tuple[str, list[SecretFound]]] = []
        for (text, where, _path, original), (redacted, findings) in zip(
            parts, results, strict=True
        ):
            found = [SecretFound(where, _line_in(original, text, f), f.kind) for f in findings]
            carried.append(((redacted if self.redact else text), found))
        return carried


def _line_in(original: str, text: str, finding: Finding) -> int:
    """The line of a finding in the file it came from: the same occurrence of its value there
    (the second `ghp_...` of the excerpt is the second of the file); else its line in `text`."""
    if original:
        value = text[finding.start : finding.end]
        at = -1
        for _ in range(text.count(value, 0, finding.start) + 1):
            at = original.find(value, at + 1)
            if at < 0:
                break
        if at >= 0:
            return line_of(original, at)
    return line_of(text, finding.start)


@dataclass(frozen=True, slots=True)
class _Detector:
    kind: str
    pattern: Pattern[str]
    needles: tuple[str, ...]
    """A line must hold one of these for the pattern to run on it; () runs it on everything."""
    keep: Callable[[str], bool] | None = None
    """Extra check of a matched value (a JWT must decode); None keeps every match."""


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
"""Lower-cases ASCII letters only, so that offsets in the folded text are offsets in the text."""


class _Lines:
    """The lines of one text that hold one of a set of needles, found with str.find."""

    def __init__(self, text: str) -> None:
        self.text = text
        folded = text.lower()  # keeps offsets unless a character lower-cases to two
        self.folded = folded if len(folded) == len(text) else text.translate(_ASCII_LOWER)
        self.limit = (text.count("\n") + 1) * WHOLE_TEXT_SHARE
        self._found: dict[tuple[str, ...], list[tuple[int, int]]] = {}

    def holding(self, needles: tuple[str, ...]) -> list[tuple[int, int]]:
        """(start, end) of each line holding a needle, in order; the whole text when the
        needles are everywhere (or when there are none)."""
        known = self._found.get(needles)
        if known is not None:
            return known
        text = self.text
        spans = [(0, len(text))]
        if needles:
            hays = [self.folded if n == n.lower() else text for n in needles]
            # counting is one C pass; walking the hits is Python, worth it only when few
            if sum(hay.count(n) for hay, n in zip(hays, needles, strict=True)) <= self.limit:
                spans = self._lines_of(needles, hays)
        self._found[needles] = spans
        return spans

    def _lines_of(self, needles: tuple[str, ...], hays: list[str]) -> list[tuple[int, int]]:
        text = self.text
        starts: set[int] = set()
        for needle, hay in zip(needles, hays, strict=True):
            at = hay.find(needle)
            while at >= 0:
                starts.add(text.rfind("\n", 0, at) + 1)
                end = text.find("\n", at)
                at = hay.find(needle, end) if end >= 0 else -1
        spans = []
        for start in sorted(starts):
            end = text.find("\n", start)
            spans.append((start, end if end >= 0 else len(text)))
        return spans


class SecretScanner:
    """detect-secrets' detectors and ours, compiled once; finds and redacts secrets in text.

    Safe to share between threads. Loading imports detect-secrets (0.2-0.3 s, mostly the
    `requests` package its plugins import for online verification, which is never used), so
    front-ends make one scanner and keep it.
    """

    def __init__(self) -> None:
        self._detectors = _load_detectors()
        self._memo: OrderedDict[tuple[bool, str], tuple[str, tuple[Finding, ...]]] = OrderedDict()
        self._lock = threading.Lock()
        from detect_secrets.filters import heuristic  # deliberate: loaded with the plugins
        from detect_secrets.plugins import keyword
        from detect_secrets.util.filetype import FileType, determine_file_type

        self._keyword = keyword
        self._file_type = determine_file_type
        self._other_type = FileType.OTHER
        self._heuristic = heuristic

    def forget(self) -> None:
        """Drop the remembered redactions (a benchmark's cold scans)."""
        with self._lock:
            self._memo.clear()

    def find(self, text: str, path: str = "") -> tuple[Finding, ...]:
        """Return the secrets in `text`, in order, none overlapping.

        Args:
            path: the file the text comes from (its type decides whether a keyword's value
                must be quoted); "" for free text such as a question.
        """
        return self.redact(text, path)[1]

    def redact(self, text: str, path: str = "") -> tuple[str, tuple[Finding, ...]]:
        """Return `text` with each secret replaced by `[redacted: <kind>]`, and the findings
        (offsets in the original text)."""
        return self.redact_many([(text, path)])[0]

    def redact_many(
        self, items: Sequence[tuple[str, str]]
    ) -> list[tuple[str, tuple[Finding, ...]]]:
        """`redact` for many (text, path) pairs: the texts not seen before are scanned as one
        (joined by a separator no pattern crosses), then their findings are handed back."""
        keys = [(self._config_like(text, path), text) for text, path in items]
        results: list[tuple[str, tuple[Finding, ...]] | None] = []
        with self._lock:
            for key in keys:
                known = self._memo.get(key)
                if known is not None:
                    self._memo.move_to_end(key)
                results.append(known)
        missing = [i for i, known in enumerate(results) if known is None]
        if missing:
            scanned = self._scan([items[i] for i in missing], [keys[i][0] for i in missing])
            with self._lock:
                for i, result in zip(missing, scanned, strict=True):
                    results[i] = result
                    self._memo[keys[i]] = result
                while len(self._memo) > MEMO_LIMIT:
                    self._memo.popitem(last=False)
        return [result for result in results if result is not None]

    def _scan(
        self, items: list[tuple[str, str]], config_like: list[bool]
    ) -> list[tuple[str, tuple[Finding, ...]]]:
        """Scan texts joined into one (`config_like`: each one's `_config_like`, worked out
        once for the memo's key); return each one's redaction and findings."""
        starts: list[int] = []
        at = 0
        for text, _path in items:
            starts.append(at)
            at += len(text) + len(SEPARATOR)
        joined = _Lines(SEPARATOR.join(text for text, _ in items))
        found: list[list[Finding]] = [[] for _ in items]
        for finding in self._find_tokens(joined):
            self._hand_back(finding, starts, items, found)
        rules = [
            self._keyword_rules(path, config)
            for (_text, path), config in zip(items, config_like, strict=True)
        ]
        for finding in self._find_keywords(joined, starts, rules):
            self._hand_back(finding, starts, items, found)
        results = []
        for (text, _path), finds in zip(items, found, strict=True):
            kept = _without_overlaps(finds)
            results.append((_replace(text, kept), kept))
        return results

    @staticmethod
    def _hand_back(
        finding: Finding,
        starts: list[int],
        items: list[tuple[str, str]],
        found: list[list[Finding]],
    ) -> None:
        """File a finding of the joined text under its own text (dropped if it crosses one)."""
        item = bisect.bisect_right(starts, finding.start) - 1
        offset = starts[item]
        if finding.end - offset <= len(items[item][0]):
            found[item].append(Finding(finding.kind, finding.start - offset, finding.end - offset))

    def _find_tokens(self, lines: _Lines) -> Iterator[Finding]:
        """Token formats: each pattern over the lines that hold one of its needles."""
        text = lines.text
        for detector in self._detectors:
            for line_start, line_end in lines.holding(detector.needles):
                for match in detector.pattern.finditer(text, line_start, line_end):
                    yield from self._token_findings(detector, match)
        for match in PRIVATE_KEY_BLOCK.finditer(text):
            group = 3 if match.group(3) is not None else 4
            start, end = match.span(group)
            while start < end and text[start] in "\r\n":  # keep the block's line breaks
                start += 1
            while end > start and text[end - 1] in "\r\n":
                end -= 1
            yield Finding("private key", start, end)

    @staticmethod
    def _token_findings(detector: _Detector, match: Match[str]) -> Iterator[Finding]:
        """The secrets of one match, unless they are placeholders or fail the plugin's check."""
        for start, end in _secret_spans(match):
            value = match.string[start:end]
            if "\n" in value or PLACEHOLDER.search(value) or IDENTIFIER.fullmatch(value):
                continue
            if detector.keep is None or detector.keep(value):
                yield Finding(detector.kind, start, end)

    def _config_like(self, text: str, path: str) -> bool:
        """A config file by its name, or a dotenv file by its lines (no code file is)."""
        if CONFIG_NAMES.search(path):
            return True
        if not path or self._file_type(path) is not self._other_type:  # code: never
            return False
        head = text[:DOTENV_HEAD].splitlines()  # its head tells its shape, at a bounded cost
        lines = [line for line in head if line.strip() and line.lstrip()[:1] != "#"]
        shaped = sum(1 for line in lines if DOTENV_LINE.match(line))
        return shaped >= 2 and shaped >= DOTENV_SHARE * len(lines)

    def _keyword_rules(self, path: str, config_like: bool) -> Any:
        """detect-secrets' keyword patterns for a file: unquoted values in config files."""
        keyword = self._keyword
        if config_like:
            return keyword.CONFIG_DENYLIST_REGEX_TO_GROUP
        file_type = keyword.determine_file_type(path) if path else None
        return keyword.REGEX_BY_FILETYPE.get(
            file_type, keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP
        )

    def _find_keywords(
        self, lines: _Lines, starts: list[int], rules: list[Any]
    ) -> Iterator[Finding]:
        """`password = "..."` and the like: detect-secrets' keyword detector, run only on the
        lines that hold one of its keywords, with the rules of the file each line is from."""
        text = lines.text
        detector = self._keyword.KeywordDetector()
        for span_start, span_end in lines.holding(KEYWORDS):
            for hit in KEYWORD_LINE.finditer(text, span_start, span_end):
                item_rules = rules[bisect.bisect_right(starts, hit.start()) - 1]
                yield from self._keyword_findings(detector, item_rules, text, hit)

    def _keyword_findings(
        self, detector: Any, rules: Any, text: str, hit: Match[str]
    ) -> Iterator[Finding]:
        """The keyword detector's finds on the line of one keyword."""
        line_start = text.rfind("\n", 0, hit.start()) + 1
        line_end = text.find("\n", hit.end())
        line = text[line_start : line_end if line_end >= 0 else len(text)]
        if self._heuristic.is_indirect_reference(line):
            return
        for value in detector.analyze_string(line, denylist_regex_to_group=rules):
            if not value or self._is_placeholder(value, line):
                continue
            at = _standalone(line, value, hit.start() - line_start)
            if at < 0:
                at = _standalone(line, value, 0)
            if at >= 0:
                kind = "password" if PASSWORD_WORDS.search(line[:at]) else "secret"
                yield Finding(kind, line_start + at, line_start + at + len(value))

    def _is_placeholder(self, value: str, line: str) -> bool:
        """detect-secrets' heuristic filters, and our placeholder words."""
        heuristic = self._heuristic
        return bool(
            heuristic.is_templated_secret(value)
            or heuristic.is_prefixed_with_dollar_sign(value)
            or heuristic.is_sequential_string(value)
            or heuristic.is_potential_uuid(value)
            or heuristic.is_not_alphanumeric_string(value)
            or heuristic.is_likely_id_string(value, line)
            or PLACEHOLDER.search(value)
            or IDENTIFIER.fullmatch(value)
            or KEYWORD_VALUE.fullmatch(value)
            or len(value) < 4
        )


_shared: SecretScanner | None = None
_shared_lock = threading.Lock()


def shared_scanner() -> SecretScanner:
    """The process's scanner, loaded on first use from any thread: the packs of every
    workspace and the paths on show (engine.shown_path) share it, so detect-secrets is
    imported and its patterns compiled once."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = SecretScanner()
        return _shared


def _standalone(line: str, value: str, start: int) -> int:
    """Where `value` first stands on its own in `line` from `start` (not inside a longer
    name: the value `user` is not the start of `username`), or -1."""
    found = re.search(rf"(?<![\w$]){re.escape(value)}(?![\w$])", line[start:])
    return start + found.start() if found is not None else -1


def _load_detectors() -> tuple[_Detector, ...]:
    """Compile detect-secrets' token patterns (line anchors made line-wise) and ours."""
    import importlib

    detectors: list[_Detector] = []
    for target, kinds, needles in DETECT_SECRETS_PLUGINS:
        module_name, _, class_name = target.partition(":")
        module = importlib.import_module(f"detect_secrets.plugins.{module_name}")
        plugin = getattr(module, class_name)()
        names = kinds.split("|")
        keep = getattr(plugin, "is_formally_valid", None)
        for position, pattern in enumerate(plugin.denylist):
            kind = names[min(position, len(names) - 1)]
            # detect-secrets matches line by line; over a whole text `^` and `$` must still
            # mean the ends of a line
            line_wise = re.compile(pattern.pattern, pattern.flags | re.MULTILINE)
            gate = needles[position] if position < len(needles) else WHOLE_TEXT
            detectors.append(_Detector(kind, line_wise, gate, keep))
    detectors.extend(
        _Detector(kind, re.compile(regex), needles) for kind, regex, needles in EXTRA_PATTERNS
    )
    return tuple(detectors)


_EDGE = " \t\r\n\"'=:`,;"
"""Characters some detect-secrets patterns match around a token (`"AKC...\"`), trimmed off."""


MIN_GROUP = 8
"""A pattern's group shorter than this is a token's prefix (`ghp`, `glpat`), not the secret."""


def _secret_spans(match: Match[str]) -> Iterator[tuple[int, int]]:
    """The spans of a match that are the secret: its groups that hold a value (the password
    of `://user:password@`), or the whole match without the quotes and separators some
    patterns include around the token."""
    groups = [g for g in range(1, (match.re.groups or 0) + 1) if len(match.group(g) or "")]
    if groups and all(len(match.group(g)) >= MIN_GROUP for g in groups):
        spans = [match.span(g) for g in groups]
        # nested groups (an outer one holding an inner one): keep the outermost
        for start, end in spans:
            if not any(s <= start and end <= e and (s, e) != (start, end) for s, e in spans):
                yield start, end
        return
    start, end = match.span()
    text = match.string
    while start < end and text[start] in _EDGE:
        start += 1
    while end > start and text[end - 1] in _EDGE:
        end -= 1
    if start < end:
        yield start, end


def _without_overlaps(findings: list[Finding]) -> tuple[Finding, ...]:
    """Sort by position; of overlapping finds keep the one that starts first (the longer on a
    tie), so a token inside a keyword's value is redacted once."""
    kept: list[Finding] = []
    for finding in sorted(findings, key=lambda f: (f.start, -f.end)):
        if kept and finding.start < kept[-1].end:
            if finding.end > kept[-1].end:
                last = kept[-1]
                kept[-1] = Finding(last.kind, last.start, finding.end)
            continue
        kept.append(finding)
    return tuple(kept)


def _replace(text: str, findings: tuple[Finding, ...]) -> str:
    """`text` with each finding's span replaced by its marker."""
    if not findings:
        return text
    parts: list[str] = []
    at = 0
    for finding in findings:
        parts.append(text[at : finding.start])
        parts.append(MARKER.format(kind=finding.kind))
        at = finding.end
    parts.append(text[at:])
    return "".join(parts)


def line_of(text: str, offset: int) -> int:
    """1-based line number of a character offset in `text`."""
    return text.count("\n", 0, offset) + 1
