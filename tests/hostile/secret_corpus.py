"""A repository of real-looking secrets and of look-alikes that are not secrets.

Each secret is a value of a real format (the right prefix, length and alphabet), made from a
seeded random generator when the corpus is built: no scannable token is written in this source
file, and the same corpus comes out every time. Each look-alike is something a code base holds
that a careless scanner would redact: hashes, UUIDs, documented example keys, placeholders,
public keys, references to secrets kept elsewhere.

`build(root)` writes the repository; `SECRETS` and `LOOK_ALIKES` say what each file holds.
`scripts/secret_scan_quality.py` prints the recall and false-positive table from it.
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass
from pathlib import Path

SEED = 20261130
"""Seed of the generator: the corpus is the same on every run."""

_UPPER_DIGITS = string.ascii_uppercase + string.digits
_ALNUM = string.ascii_letters + string.digits
_LOWER_HEX = "0123456789abcdef"
_B64 = string.ascii_letters + string.digits + "+/"
_URLSAFE = string.ascii_letters + string.digits + "-_"


@dataclass(frozen=True, slots=True)
class Sample:
    """One line of the corpus: what it is, the file it is in, and the value to look for."""

    kind: str
    """What it is ("AWS access key", "SHA-256 digest in a test")."""
    path: str
    """The file of the corpus repository that holds it."""
    line: str
    """The line as written in the file."""
    value: str
    """The part of the line that must (secret) or must not (look-alike) be redacted."""


def _pick(rng: random.Random, alphabet: str, count: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(count))


def _b64url(data: dict[str, object]) -> str:
    raw = json.dumps(data, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _pem_body(rng: random.Random, lines: int) -> str:
    return "\n".join(_pick(rng, _B64, 64) for _ in range(lines))


def secrets(rng: random.Random) -> list[Sample]:
    """Twenty-eight kinds of real-looking secrets, each in the kind of file that holds it; the
    last three have no format of their own, only their place says they are secrets."""
    aws_id = "AKIA" + _pick(rng, _UPPER_DIGITS, 16)
    aws_secret = _pick(rng, _ALNUM + "+/", 40)
    gh_classic = "ghp_" + _pick(rng, _ALNUM, 36)
    gh_fine = "github_pat_" + _pick(rng, _ALNUM, 22) + "_" + _pick(rng, _ALNUM, 59)
    gitlab = "glpat-" + _pick(rng, _URLSAFE, 20)
    slack_bot = f"xoxb-{rng.randrange(10**11, 10**12)}-{rng.randrange(10**12, 10**13)}-" + (
        _pick(rng, string.ascii_lowercase + string.digits, 24)
    )
    slack_hook = (
        "https://hooks.slack.com/services/T"
        + _pick(rng, _UPPER_DIGITS, 8)
        + "/B"
        + _pick(rng, _UPPER_DIGITS, 10)
        + "/"
        + _pick(rng, _ALNUM, 24)
    )
    stripe = "sk_live_" + _pick(rng, _ALNUM, 24)
    openai = "sk-proj-" + _pick(rng, _ALNUM, 20) + "T3BlbkFJ" + _pick(rng, _ALNUM, 20)
    anthropic = "sk-ant-api03-" + _pick(rng, _URLSAFE, 93) + "AA"
    google = "AIza" + _pick(rng, _URLSAFE, 35)
    google_oauth = "GOCSPX-" + _pick(rng, _URLSAFE, 28)
    sendgrid = "SG." + _pick(rng, _URLSAFE, 22) + "." + _pick(rng, _URLSAFE, 43)
    twilio = "SK" + _pick(rng, _LOWER_HEX, 32)
    npm = "npm_" + _pick(rng, _ALNUM, 36)
    pypi = "pypi-AgEIcHlwaS5vcmc" + _pick(rng, _URLSAFE, 120)
    huggingface = "hf_" + _pick(rng, string.ascii_letters, 34)
    discord = (
        "M"
        + _pick(rng, _ALNUM, 23)
        + "."
        + _pick(rng, _URLSAFE, 6)
        + "."
        + _pick(rng, _URLSAFE, 27)
    )
    jwt = ".".join(
        (
            _b64url({"alg": "HS256", "typ": "JWT"}),
            _b64url({"sub": str(rng.randrange(10**9)), "role": "admin", "exp": 1893456000}),
            _pick(rng, _URLSAFE, 43),
        )
    )
    db_password = _pick(rng, _ALNUM, 12) + "!" + _pick(rng, _ALNUM, 5)
    url_password = _pick(rng, _ALNUM, 18)
    yaml_password = _pick(rng, _ALNUM, 20)
    azure_key = _pick(rng, _ALNUM + "+/", 86) + "=="
    rsa_body = _pem_body(rng, 6)
    ssh_body = _pem_body(rng, 5)
    header_key = _pick(rng, _LOWER_HEX, 32)
    mysql_password = _pick(rng, _ALNUM, 14)
    netrc_password = (
        _pick(rng, _LOWER_HEX, 8)
        + "-"
        + _pick(rng, _LOWER_HEX, 4)
        + "-"
        + (_pick(rng, _LOWER_HEX, 12))
    )
    return [
        Sample("AWS access key", "config.py", f'AWS_ACCESS_KEY_ID = "{aws_id}"', aws_id),
        Sample(
            "AWS secret access key",
            "config.py",
            f'aws_secret_access_key = "{aws_secret}"',
            aws_secret,
        ),
        Sample("GitHub token", "deploy.py", f'GITHUB_TOKEN = "{gh_classic}"', gh_classic),
        Sample("GitHub fine-grained token", "deploy.py", f'gh = Github("{gh_fine}")', gh_fine),
        Sample("GitLab token", "ci/release.sh", f"curl -H 'PRIVATE-TOKEN: {gitlab}' $API", gitlab),
        Sample(
            "Slack bot token",
            "notify.js",
            f'const slack = new WebClient("{slack_bot}");',
            slack_bot,
        ),
        Sample("Slack webhook", "notify.js", f'const HOOK = "{slack_hook}";', slack_hook),
        Sample("Stripe secret key", "billing/keys.rb", f'Stripe.api_key = "{stripe}"', stripe),
        Sample("OpenAI key", "ai/client.py", f'client = OpenAI(api_key="{openai}")', openai),
        Sample("Anthropic key", "ai/client.py", f'ANTHROPIC = "{anthropic}"', anthropic),
        Sample("Google API key", "web/maps.ts", f'const MAPS_KEY = "{google}";', google),
        Sample(
            "Google OAuth secret",
            "web/oauth.json",
            f'  "client_secret": "{google_oauth}",',
            google_oauth,
        ),
        Sample("SendGrid key", "mail/send.go", f'const sendgridKey = "{sendgrid}"', sendgrid),
        Sample("Twilio API key", "sms/twilio.php", f"$sid = '{twilio}';", twilio),
        Sample("npm token", "scripts/publish.sh", f"export NODE_AUTH_TOKEN={npm}", npm),
        Sample("PyPI token", "scripts/upload.sh", f"twine upload -p {pypi} dist/*", pypi),
        Sample("Hugging Face token", "ai/hub.py", f'login(token="{huggingface}")', huggingface),
        Sample("Discord bot token", "bot/main.py", f'bot.run("{discord}")', discord),
        Sample("JSON web token", "tests/fixtures/session.py", f'ADMIN_JWT = "{jwt}"', jwt),
        Sample(
            "password in Python",
            "db/settings.py",
            f'DB_PASSWORD = "{db_password}"',
            db_password,
        ),
        Sample(
            "password in a database URL",
            "db/settings.py",
            f'DATABASE_URL = "postgresql://app:{url_password}@db.internal:5432/prod"',
            url_password,
        ),
        Sample(
            "password in YAML",
            "deploy/compose.yml",
            f"      POSTGRES_PASSWORD: {yaml_password}",
            yaml_password,
        ),
        Sample(
            "Azure storage key",
            "cloud/azure.cs",
            f'var conn = "DefaultEndpointsProtocol=https;AccountName=shop;AccountKey={azure_key}";',
            azure_key,
        ),
        Sample(
            "RSA private key",
            "certs/bundle.txt",
            f"-----BEGIN RSA PRIVATE KEY-----\n{rsa_body}\n-----END RSA PRIVATE KEY-----",
            rsa_body.splitlines()[2],
        ),
        Sample(
            "OpenSSH private key",
            "docs/ssh-setup.md",
            f"-----BEGIN OPENSSH PRIVATE KEY-----\n{ssh_body}\n-----END OPENSSH PRIVATE KEY-----",
            ssh_body.splitlines()[1],
        ),
        Sample(
            "API key in a request header",
            "app/weather.py",
            f'requests.get(URL, headers={{"X-Api-Key": "{header_key}"}})',
            header_key,
        ),
        Sample(
            "password on a command line",
            "scripts/backup.sh",
            f"mysqldump -u root -p{mysql_password} shop > shop.sql",
            mysql_password,
        ),
        Sample(
            "password in a netrc snippet",
            "docs/heroku.md",
            f"machine api.heroku.com login ops@shop.example password {netrc_password}",
            netrc_password,
        ),
    ]


def look_alikes(rng: random.Random) -> list[Sample]:
    """Twenty-four things code bases hold that look like secrets and are not."""
    sha1 = _pick(rng, _LOWER_HEX, 40)
    sha256 = _pick(rng, _LOWER_HEX, 64)
    uuid = "-".join(_pick(rng, _LOWER_HEX, n) for n in (8, 4, 4, 4, 12))
    integrity = "sha512-" + base64.b64encode(rng.randbytes(64)).decode()
    ssh_public = "AAAAC3NzaC1lZDI1NTE5AAAAI" + _pick(rng, _B64, 43)
    cert_body = _pem_body(rng, 4)
    image = "iVBORw0KGgoAAAANSUhEUgAA" + _pick(rng, _B64, 120)
    stripe_public = "pk_live_" + _pick(rng, _ALNUM, 24)
    md5 = _pick(rng, _LOWER_HEX, 32)
    return [
        Sample("git commit hash", "CHANGELOG.md", f"- Fix the cart total ({sha1})", sha1),
        Sample(
            "SHA-256 digest in a test",
            "tests/test_hashes.py",
            f'EXPECTED_SHA256 = "{sha256}"',
            sha256,
        ),
        Sample("MD5 checksum", "tests/test_hashes.py", f'CHECKSUM = "{md5}"', md5),
        Sample("UUID", "tests/test_hashes.py", f'REQUEST_ID = "{uuid}"', uuid),
        Sample(
            "AWS's documented example key",
            "docs/aws.md",
            'export AWS_ACCESS_KEY_ID="AKIAIOSFODNN7EXAMPLE"',
            "AKIAIOSFODNN7EXAMPLE",
        ),
        Sample(
            "AWS's documented example secret",
            "docs/aws.md",
            'aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        ),
        Sample(
            "password read from the environment",
            "app/db.py",
            'password = os.environ["DB_PASSWORD"]',
            'os.environ["DB_PASSWORD"]',
        ),
        Sample("API key from a function", "app/db.py", "api_key = get_api_key()", "get_api_key()"),
        Sample(
            "templated token",
            "deploy/ci.yml",
            "      token: ${{ secrets.GITHUB_TOKEN }}",
            "secrets",
        ),
        Sample("placeholder key", "README.md", 'API_KEY = "<your-api-key>"', "<your-api-key>"),
        Sample(
            "placeholder token of x's",
            "README.md",
            'GITHUB_TOKEN = "ghp_' + "x" * 36 + '"',
            "ghp_" + "x" * 36,
        ),
        Sample(
            "SSH public key",
            "deploy/authorized_keys.txt",
            f"ssh-ed25519 {ssh_public} deploy@ci",
            ssh_public,
        ),
        Sample(
            "TLS certificate",
            "certs/ca.crt",
            f"-----BEGIN CERTIFICATE-----\n{cert_body}\n-----END CERTIFICATE-----",
            cert_body.splitlines()[1],
        ),
        Sample(
            "npm integrity hash",
            "web/package.json",
            f'    "integrity": "{integrity}",',
            integrity,
        ),
        Sample(
            "name of a password field",
            "app/forms.py",
            'PASSWORD_FIELD = "password_confirmation"',
            "password_confirmation",
        ),
        Sample(
            "function taking a password",
            "app/forms.py",
            "def check_password(password: str, hashed: bytes) -> bool:",
            "password: str",
        ),
        Sample(
            "image as base64",
            "web/logo.css",
            f".logo {{ background: url(data:image/png;base64,{image}); }}",
            image,
        ),
        Sample(
            "Stripe publishable key",
            "web/checkout.ts",
            f'const STRIPE_PK = "{stripe_public}";',
            stripe_public,
        ),
        Sample("private IP and port", "deploy/hosts.ini", "db = 10.0.12.7:5432", "10.0.12.7:5432"),
        Sample(
            "secret read by ERB",
            "config/secrets.example.yml",
            '  secret_key_base: <%= ENV["SECRET_KEY_BASE"] %>',
            '<%= ENV["SECRET_KEY_BASE"] %>',
        ),
        Sample(
            "masked password", "tests/fixtures/user.json", '  "password": "********",', "********"
        ),
        Sample(
            "documented key prefix",
            "docs/keys.md",
            "Keys start with `sk-...` and are read from OPENAI_API_KEY.",
            "sk-...",
        ),
        Sample(
            "empty password default",
            "app/models.py",
            'password: str = ""',
            'password: str = ""',
        ),
        Sample(
            "Python constant naming a token type",
            "app/models.py",
            'TOKEN_TYPE = "bearer_access_token"',
            "bearer_access_token",
        ),
    ]


SECRETS = secrets(random.Random(SEED))
"""The secrets of the corpus, in the order they are written."""
LOOK_ALIKES = look_alikes(random.Random(SEED + 1))
"""The look-alikes of the corpus."""


def build(root: Path) -> Path:
    """Write the corpus repository under `root`: each file holds its samples, a line apart."""
    files: dict[str, list[str]] = {}
    for sample in (*SECRETS, *LOOK_ALIKES):
        files.setdefault(sample.path, []).append(sample.line)
    for path, lines in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("\n\n".join(lines) + "\n", encoding="utf-8")
    return root
