#!/usr/bin/env python3
"""Writes the credential screen's test corpus, deterministically (seed 45):
credentials.tsv (format<TAB>text: synthetic credentials, random values of
each format's shape, never real ones) and benign.txt (lines of similar shape
that hold none). Run from this directory: python3 generate.py"""
import base64
import random
import string

R = random.Random(45)
LOW = string.ascii_lowercase
UP = string.ascii_uppercase
DIG = string.digits
HEX = "0123456789abcdef"
ALNUM = LOW + UP + DIG
B32 = UP + "234567"


def r(chars, n):
    return "".join(R.choice(chars) for _ in range(n))


def word():
    return R.choice(["deploy", "staging", "billing", "reports", "ci", "backup", "metrics", "mail", "vpn", "build"])


def pw():
    """A password-like value: letters, digits, a symbol."""
    return r(LOW, 3).capitalize() + r(LOW, 3) + r(DIG, 2) + R.choice("!#%&*+-_") + r(ALNUM, 2)


# Provider formats: (name, value generator). Shapes from the gitleaks rules.
PROVIDERS = [
    ("github-pat", lambda: "ghp_" + r(ALNUM, 36)),
    ("github-oauth", lambda: "gho_" + r(ALNUM, 36)),
    ("github-app-token", lambda: R.choice(["ghu_", "ghs_"]) + r(ALNUM, 36)),
    ("github-refresh-token", lambda: "ghr_" + r(ALNUM, 36)),
    ("github-fine-grained-pat", lambda: "github_pat_" + r(ALNUM + "_", 82)),
    ("gitlab-pat", lambda: "glpat-" + r(ALNUM, 20)),
    ("gitlab-ptt", lambda: "glptt-" + r(HEX, 40)),
    ("gitlab-deploy-token", lambda: "gldt-" + r(ALNUM, 20)),
    ("aws-access-key", lambda: "AKIA" + r(B32, 16)),
    ("gcp-api-key", lambda: "AIza" + r(ALNUM + "_-", 35)),
    ("slack-bot-token", lambda: "xoxb-" + r(DIG, 11) + "-" + r(DIG, 12) + "-" + r(ALNUM, 24)),
    ("slack-user-token", lambda: "xoxp-" + r(DIG, 11) + "-" + r(DIG, 11) + "-" + r(DIG, 12) + "-" + r(LOW + DIG, 32)),
    ("slack-app-token", lambda: "xapp-1-A" + r(UP + DIG, 10) + "-" + r(DIG, 13) + "-" + r(LOW + DIG, 64)),
    ("slack-webhook-url", lambda: "https://hooks.slack.com/services/T" + r(UP + DIG, 8) + "/B" + r(UP + DIG, 10) + "/" + r(ALNUM, 24)),
    ("stripe-secret-key", lambda: R.choice(["sk_live_", "sk_test_", "rk_live_"]) + r(ALNUM, 24)),
    ("npm-access-token", lambda: "npm_" + r(ALNUM, 36)),
    ("pypi-upload-token", lambda: "pypi-AgEIcHlwaS5vcmc" + r(ALNUM + "_-", 60)),
    ("openai-api-key", lambda: "sk-proj-" + r(ALNUM, 58) + "T3BlbkFJ" + r(ALNUM, 58)),
    ("openai-legacy-key", lambda: "sk-" + r(ALNUM, 20) + "T3BlbkFJ" + r(ALNUM, 20)),
    ("anthropic-api-key", lambda: "sk-ant-api03-" + r(ALNUM, 93) + "AA"),
    ("huggingface-access-token", lambda: "hf_" + r(LOW + UP, 34)),
    ("databricks-api-token", lambda: "dapi" + r(HEX, 32)),
    ("digitalocean-pat", lambda: "dop_v1_" + r(HEX, 64)),
    ("doppler-api-token", lambda: "dp.pt." + r(ALNUM, 43)),
    ("dynatrace-api-token", lambda: "dt0c01." + r(UP + DIG, 24) + "." + r(UP + DIG, 64)),
    ("easypost-api-token", lambda: "EZAK" + r(ALNUM, 54)),
    ("flutterwave-secret-key", lambda: "FLWSECK_TEST-" + r("abcdefgh" + DIG, 32) + "-X"),
    ("grafana-cloud-api-token", lambda: "glc_" + r(ALNUM, 40)),
    ("grafana-service-account-token", lambda: "glsa_" + r(ALNUM, 32) + "_" + r(HEX, 8)),
    ("heroku-api-key-v2", lambda: "HRKU-AA" + r(ALNUM, 58)),
    ("linear-api-key", lambda: "lin_api_" + r(ALNUM, 40)),
    ("notion-api-token", lambda: "ntn_" + r(DIG, 11) + r(ALNUM, 35)),
    ("perplexity-api-key", lambda: "pplx-" + r(ALNUM, 48)),
    ("planetscale-password", lambda: "pscale_pw_" + r(ALNUM, 43)),
    ("planetscale-api-token", lambda: "pscale_tkn_" + r(ALNUM, 43)),
    ("postman-api-token", lambda: "PMAK-" + r(HEX, 24) + "-" + r(HEX, 34)),
    ("prefect-api-token", lambda: "pnu_" + r(ALNUM, 36)),
    ("pulumi-api-token", lambda: "pul-" + r(HEX, 40)),
    ("readme-api-token", lambda: "rdme_" + r(LOW + DIG, 70)),
    ("rubygems-api-token", lambda: "rubygems_" + r(HEX, 48)),
    ("scalingo-api-token", lambda: "tk-us-" + r(ALNUM, 48)),
    ("sendgrid-api-token", lambda: "SG." + r(ALNUM, 22) + "." + r(ALNUM, 43)),
    ("sendinblue-api-token", lambda: "xkeysib-" + r(HEX, 64) + "-" + r(ALNUM, 16)),
    ("sentry-user-token", lambda: "sntryu_" + r(HEX, 64)),
    ("shippo-api-token", lambda: "shippo_live_" + r(HEX, 40)),
    ("shopify-access-token", lambda: "shpat_" + r(HEX, 32)),
    ("shopify-shared-secret", lambda: "shpss_" + r(HEX, 32)),
    ("square-access-token", lambda: "EAAA" + r(ALNUM, 60)),
    ("twilio-api-key", lambda: "SK" + r(HEX, 32)),
    ("age-secret-key", lambda: "AGE-SECRET-KEY-1" + r("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)),
    ("artifactory-api-key", lambda: "AKCp" + r(ALNUM, 69)),
    ("clojars-api-token", lambda: "CLOJARS_" + r(LOW + DIG, 60)),
    ("duffel-api-token", lambda: "duffel_live_" + r(ALNUM, 43)),
    ("vault-service-token", lambda: "hvs." + r(ALNUM, 95)),
    ("octopus-deploy-api-key", lambda: "API-" + r(UP + DIG, 26)),
    ("openshift-user-token", lambda: "sha256~" + r(ALNUM + "_-", 43)),
    ("alibaba-access-key-id", lambda: "LTAI" + r(ALNUM, 20)),
    ("jwt", lambda: "eyJ" + r(ALNUM, 30) + ".eyJ" + r(ALNUM, 40) + "." + r(ALNUM + "_-", 43)),
    ("airtable-pat", lambda: "airtable token " + "pat" + r(ALNUM, 14) + "." + r(HEX, 64)),
    ("1password-secret-key", lambda: "A3-" + r(UP + DIG, 6) + "-" + r(UP + DIG, 11) + "-" + r(UP + DIG, 5) + "-" + r(UP + DIG, 5) + "-" + r(UP + DIG, 5)),
    ("microsoft-teams-webhook", lambda: "https://acme.webhook.office.com/webhookb2/" + "-".join(r(LOW + DIG, n) for n in (8, 4, 4, 4, 12)) + "@" + "-".join(r(LOW + DIG, n) for n in (8, 4, 4, 4, 12)) + "/IncomingWebhook/" + r(LOW + DIG, 32) + "/" + "-".join(r(LOW + DIG, n) for n in (8, 4, 4, 4, 12))),
    ("mailgun-private-api-token", lambda: "mailgun key: key-" + r(HEX, 32)),
    ("telegram-bot-api-token", lambda: "telegram bot token: " + r(DIG, 10) + ":A" + r(ALNUM + "_-", 34)),
    ("discord-api-token", lambda: "discord token = " + r(HEX, 64)),
    ("generic-secret-assignment", lambda: R.choice(["API_KEY", "client_secret", "auth_token", "SECRET_KEY"]) + "=" + r(ALNUM, 32)),
]

WRAP = [
    "use {v} for the {w} bot",
    "the {w} job authenticates with {v}",
    "{v}",
    "new token for {w}: {v}",
    "Here it is: {v} (don't share)",
]

# Labels with a value, in many languages: (language, template).
LANGS = [
    ("en", "The password for the {w} bot is {p}"),
    ("en", "{w} password: {p}"),
    ("en", "my password is {p} remember it"),
    ("en", "The {w} PIN is {d}"),
    ("pt", "senha: {p}"),
    ("pt", "A senha do servidor {w} é {p}"),
    ("es", "contraseña: {p}"),
    ("es", "La contraseña del {w} es {p}"),
    ("de", "Passwort: {p}"),
    ("de", "Das Passwort für {w} ist {p}"),
    ("de", "Kennwort = {p}"),
    ("fr", "mot de passe : {p}"),
    ("fr", "Le mot de passe du serveur {w} est {p}"),
    ("ru", "пароль: {p}"),
    ("ru", "Пароль от {w} — {p}"),
    ("zh", "密码：{p}"),
    ("zh", "{w}的密码是{p}"),
    ("ja", "パスワード: {p}"),
    ("ja", "{w}のパスワードは{p}"),
    ("nl", "wachtwoord: {p}"),
    ("nl", "Het wachtwoord van {w} is {p}"),
    ("pl", "hasło: {p}"),
    ("pl", "Hasło do {w} jest {p}"),
    ("it", "parola d'ordine: {p}"),
    ("it", "La password del server {w} è {p}"),
    ("tr", "şifre: {p}"),
    ("tr", "{w} şifresi: {p}"),
    ("sv", "lösenord: {p}"),
    ("sv", "Lösenordet till {w} är {p}"),
    ("fi", "salasana: {p}"),
    ("fi", "{w} salasana on {p}"),
    ("ko", "비밀번호: {p}"),
    ("ko", "{w} 비밀번호는 {p}"),
    ("cs", "heslo: {p}"),
    ("da", "adgangskode: {p}"),
    ("ro", "parola: {p}"),
]

CONN = [
    "postgres://app:{p}@db.internal:5432/app",
    "mysql://root:{p}@mysql-{w}.internal/orders",
    "mongodb+srv://svc_{w}:{p}@cluster0.example.net/test",
    "redis://default:{p}@cache.{w}.internal:6379",
    "amqp://guest:{p}@rabbit.{w}.internal:5672/",
    "DATABASE_URL=postgresql://{w}:{p}@10.0.3.4/{w}",
    "ftp://upload:{p}@files.example.com/in",
]


def private_key():
    body = base64.b64encode(bytes(R.getrandbits(8) for _ in range(96))).decode()
    kind = R.choice(["RSA ", "OPENSSH ", "EC ", ""])
    return f"-----BEGIN {kind}PRIVATE KEY----- {body} -----END {kind}PRIVATE KEY-----"


def credentials():
    out = []
    for name, gen in PROVIDERS:
        for _ in range(3):
            out.append((name, R.choice(WRAP).format(v=gen(), w=word())))
    for lang, t in LANGS:
        for _ in range(2):
            out.append((f"label-{lang}", t.format(p=pw(), w=word(), d=r(DIG, 4))))
    for t in CONN:
        out.append(("connection-string", t.format(p=pw().replace("#", "x").replace("%", "y"), w=word())))
    for _ in range(4):
        out.append(("private-key", private_key()))
    for _ in range(3):
        out.append(("bearer", f"curl -H 'Authorization: Bearer {r(ALNUM, 32)}' https://api.example.com/v1/{word()}"))
    for _ in range(4):
        inner = f"password: {pw()}"
        out.append(("base64-wrapped", f"the {word()} login is {base64.b64encode(inner.encode()).decode()}"))
    for _ in range(3):
        inner = f"password={pw()}"
        out.append(("hex-wrapped", f"decode this: {inner.encode().hex()}"))
    return out


def benign():
    out = []
    hosts = ["db.internal", "vpn.example.com", "pg-staging-03", "build-agent-7.ci.local", "mail.example.org", "10.0.3.4", "api.example.com:8443"]
    sentences = [
        "Passwords are reset at the IT desk on floor {n}",
        "The password policy needs {n} characters",
        "Ask Ana for the API key",
        "Where do I reset my password?",
        "The password manager is 1Password, ask IT for access",
        "Password changes take effect after {n} minutes",
        "My password expired yesterday, I'll reset it",
        "The API key rotation is every {n} days",
        "Tokens expire after {n} hours",
        "Please don't paste passwords in chat",
        "The token is valid for {n} minutes",
        "Keep the secret key in the vault, not in the repo",
        "The password must be at least {n} characters long",
        "The password reset link is on the login page",
        "Use SSO instead of a password for the {w} dashboard",
        "Password length: {n} characters minimum",
        "The PIN is on the back of the card",
        "Remember to rotate the {w} access keys this quarter",
        "The deploy key for {w} lives in the secrets manager",
        "I forgot my password again",
        "A senha deve ter {n} caracteres",
        "La contraseña se cambia cada {n} días",
        "Das Passwort muss alle {n} Tage geändert werden",
        "Le mot de passe doit contenir {n} caractères",
        "Пароль нужно менять каждые {n} дней",
        "密码需要至少{n}个字符",
        "パスワードは{n}文字以上にしてください",
        "Het wachtwoord moet {n} tekens lang zijn",
        "Hasło musi mieć {n} znaków",
        "Şifre en az {n} karakter olmalı",
        "Lösenordet måste bytas var {n}:e dag",
        "Salasanan pitää olla {n} merkkiä",
        "비밀번호는 {n}자 이상이어야 합니다",
        "The secret to good coffee is fresh beans",
        "Ticket key = OPS-{n}",
        "What is the password for the {w} bot?",
        "Is there a password on the {w} share?",
        "The token for the {w} parking garage is in the drawer",
        "API version: 2024-06-{n}",
        "Passwort vergessen? Frag das IT-Team",
        "access_token_expires_in={n}00",
        "ssh deploy@build-agent-{n}.ci.local",
        "git clone git@github.com:acme/{w}.git",
        "chown {w}:{w} /srv/{w}",
        "The key to the {w} room is with Ana",
        "Secret Santa is on the {n}th",
        "Our PIN policy: {n} digits, changed yearly",
        "The password is the one from the onboarding email",
        "Token bucket size = {n} requests",
        "Primary key: order_id",
        "The API key is stored in Vault under kv/{w}",
        "Mot de passe oublié ? Contactez le support",
        "La contraseña está en el gestor de contraseñas",
        "Пароль от wifi знает Анна",
        "session id {n}f3a2c",
        "https://{w}.example.com/login?user=ana&next=/home",
        "Auth header is required for /api/v{n}/{w}",
    ]
    templates = [
        lambda: f"The {word()} service runs on {R.choice(hosts)}",
        lambda: f"Ticket {R.choice(['JIRA', 'OPS', 'INC', 'SUP', 'BUG'])}-{R.randint(10, 99999)} is about the {word()} outage",
        lambda: f"Fixed in commit {r(HEX, 40)}",
        lambda: f"see {r(HEX, 7)} for the {word()} change",
        lambda: f"cherry-pick {r(HEX, 12)} onto release",
        lambda: f"Request id {'-'.join(r(HEX, n) for n in (8, 4, 4, 4, 12))} failed",
        lambda: f"user uuid: {'-'.join(r(HEX, n) for n in (8, 4, 4, 4, 12))}",
        lambda: f"Upgrade {word()} to v{R.randint(0, 20)}.{R.randint(0, 40)}.{R.randint(0, 99)}",
        lambda: f"version = {R.randint(1, 9)}.{R.randint(0, 30)}.{R.randint(0, 9)}-rc.{R.randint(1, 5)}",
        lambda: f"Order number {R.randint(1000000, 99999999)} shipped on {R.randint(1, 28)} March",
        lambda: f"order #{r(UP, 2)}-{R.randint(100000, 999999)} is delayed",
        lambda: f"The {word()} plan costs ${R.randint(5, 999)}.{R.randint(0, 99):02d} a month",
        lambda: f"Invoice total: EUR {R.randint(100, 99999)},{R.randint(0, 99):02d}",
        lambda: f"Call me at +1 555 {R.randint(100, 999)} {R.randint(1000, 9999)}",
        lambda: f"The sha256 of the release tarball is {r(HEX, 64)}",
        lambda: f"Image digest sha256:{r(HEX, 64)}",
        lambda: f"Meeting at {R.randint(8, 18)}:{R.choice(['00', '15', '30', '45'])} in room {R.randint(100, 499)}",
        lambda: f"Build #{R.randint(1000, 99999)} of {word()} passed in {R.randint(2, 59)} minutes",
        lambda: f"https://{R.choice(['wiki', 'docs', 'grafana'])}.example.com/{word()}/{r(LOW, 6)}?id={R.randint(1, 9999)}",
        lambda: f"postgres://{R.choice(hosts)}:5432/{word()} is the read replica",
        lambda: f"Logs are in /var/log/{word()}/{word()}-{R.randint(1, 31)}.log",
        lambda: f"The tracking number is 1Z{r(UP + DIG, 16)}",
        lambda: f"Set timeout = {R.randint(5, 600)}s for the {word()} client",
        lambda: f"Container {r(HEX, 12)} restarted {R.randint(2, 40)} times",
        lambda: f"Our customer id is CUST-{R.randint(10000, 99999)}",
        lambda: f"The {word()} team meets every {R.choice(['Monday', 'Tuesday', 'Friday'])}",
        lambda: f"Serial number {r(UP, 3)}{R.randint(100000, 999999)}",
        lambda: f"Use the {word()} key bindings: ctrl+{R.choice(LOW)}",
        lambda: R.choice(sentences).format(n=R.randint(2, 90), w=word()),
        lambda: R.choice(sentences).format(n=R.randint(2, 90), w=word()),
        lambda: R.choice(sentences).format(n=R.randint(2, 90), w=word()),
    ]
    seen = set()
    while len(out) < 1200:
        line = R.choice(templates)()
        if line not in seen:
            seen.add(line)
            out.append(line)
    return out


if __name__ == "__main__":
    with open("credentials.tsv", "w", encoding="utf-8") as f:
        for fmt, text in credentials():
            f.write(f"{fmt}\t{text}\n")
    with open("benign.txt", "w", encoding="utf-8") as f:
        for line in benign():
            f.write(line + "\n")
