//! One authorization point (`memory::authz::authorize`), tried as an
//! attacker would on every surface: nobody acts as another person (a key
//! acts as whoever made it), and a key made for an administrator acting on
//! someone's behalf administers nothing — not through the REST API, not
//! through chat commands, not through a model's tools. Every chat command and
//! every tool is classified in the table. On both databases.

use axum::http::StatusCode;
use memory::authz::{Action, Capability};
use memory::write::RawWrites;
use memory::{Db, NewRecord, Role, Scope, Status};
use serde_json::{json, Value};
use steward::commands::ChatCommand;
use steward::config::Config;
use steward::http::{app, AppState};
use steward::tools::Tool;
use steward_tests::fake_llm::{Answer, FakeLlm, TEXT};
use steward_tests::{both_dbs, record, Harness};
use strum::VariantArray;

const ADMIN: &str = "discord:111";
const ANA: &str = "discord:222";

/// An administrator and Ana, each with a key of their own; Ana lets the
/// administrator act for her, and the administrator made the key that does.
struct Office {
    h: Harness,
    app: axum::Router,
    admin: String,
    ana: String,
    /// The administrator's key acting on Ana's behalf.
    for_ana: String,
}

impl Office {
    async fn on(db: Db, cfg: Config) -> Office {
        let h = Harness::on(db, cfg);
        h.pair("111", Role::Admin).await;
        h.pair("222", Role::User).await;
        let p = h.services.pairing().clone();
        let admin = p.create_api_key("default", ADMIN, ADMIN, 1).await.unwrap();
        let ana = p.create_api_key("default", ANA, ANA, 1).await.unwrap();
        let app = app(AppState::new(h.services.clone()));
        let mut o = Office {
            h,
            app,
            admin: admin.key,
            ana: ana.key,
            for_ana: String::new(),
        };
        let (s, grant) = o
            .call(
                "POST",
                "/api/v1/me/delegates",
                &o.ana,
                Some(json!({"delegate": ADMIN})),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{grant}");
        let (s, key) = o
            .call(
                "POST",
                "/api/v1/me/keys",
                &o.admin,
                Some(json!({"on_behalf_of": ANA})),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{key}");
        o.for_ana = key["key"].as_str().unwrap().to_string();
        o
    }

    async fn call(
        &self,
        method: &str,
        path: &str,
        key: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        steward_tests::call_api(&self.app, method, path, key, body).await
    }

    /// A message over `POST /api/v1/messages` with `key`; the joined replies.
    async fn say(&self, key: &str, text: &str) -> String {
        let (s, body) = self
            .call("POST", "/api/v1/messages", key, Some(json!({"text": text})))
            .await;
        assert_eq!(s, StatusCode::OK, "{text}: {body}");
        body["replies"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["text"].as_str().unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// A newcomer asks to pair, now on the API's clock; their code.
    async fn newcomer_code(&self) -> String {
        let now = chrono::Utc::now().timestamp_millis();
        let asked = self
            .h
            .services
            .pairing()
            .request("default", "discord", "discord:999", "Newcomer", now)
            .await
            .unwrap();
        match asked {
            pairing::PairOutcome::Code { code, .. } => code,
            other => panic!("a code, not {other:?}"),
        }
    }
}

/// Finding: with a key an administrator made to act for a regular user,
/// `/pair approve CODE admin` paired a new administrator, `/skills` curated
/// and `@notes:` taught the organisation. Each is refused now, in the
/// delegation's words; the administrator's own key still does each.
#[tokio::test]
async fn a_key_acting_for_someone_administers_nothing_through_chat() {
    for (name, db) in both_dbs().await {
        let o = Office::on(db, Config::default()).await;
        let code = o.newcomer_code().await;
        let refused = o
            .say(&o.for_ana, &format!("/pair approve {code} admin"))
            .await;
        assert!(refused.contains("on someone's behalf"), "{name}: {refused}");
        let pairing = o.h.services.pairing();
        assert!(
            pairing
                .resolve("default", "discord:999")
                .await
                .unwrap()
                .is_none(),
            "{name}: nobody was paired"
        );
        for attempt in ["/skills", "/skill approve 1 abc", "/role accept 1"] {
            let refused = o.say(&o.for_ana, attempt).await;
            assert!(
                refused.contains("on someone's behalf"),
                "{name}: {attempt}: {refused}"
            );
        }
        let refused = o
            .say(
                &o.for_ana,
                "@notes: The daily report uses example_delegated",
            )
            .await;
        assert!(
            o.h.records_containing("example_delegated").await.is_empty(),
            "{name}: {refused}"
        );
        // The administrator's own key: the same command pairs.
        let approved = o.say(&o.admin, &format!("/pair approve {code} user")).await;
        assert!(approved.starts_with("Approved"), "{name}: {approved}");
        let paired = pairing.resolve("default", "discord:999").await.unwrap();
        assert_eq!(paired.map(|u| u.role), Some(Role::User), "{name}");
    }
}

/// Finding: a model's `review_learned` call in a delegated turn confirmed a
/// quarantined record. The tool is refused before it reads anything; the
/// administrator's own turn confirms it.
#[tokio::test]
async fn a_model_tool_in_a_delegated_turn_administers_nothing() {
    for (name, db) in both_dbs().await {
        let fake = FakeLlm::start().await;
        let o = Office::on(db, fake.config()).await;
        let quarantined =
            o.h.db()
                .records()
                .insert_record(&NewRecord {
                    status: Status::Unverified,
                    ..record(
                        "default",
                        Scope::AgentNotes,
                        None,
                        "vpn",
                        "The VPN is at vpn.example.com",
                        1,
                    )
                })
                .await
                .unwrap();
        let status = || async {
            o.h.records()
                .await
                .into_iter()
                .find(|r| r.id == quarantined)
                .map(|r| r.status)
        };
        fake.push(
            TEXT,
            Answer::tool(
                "review_learned",
                json!({"id": quarantined, "confirm": true}),
            ),
        );
        fake.push(TEXT, Answer::Content("Confirmed.".into()));
        o.say(&o.for_ana, "confirm the VPN record").await;
        assert_eq!(status().await, Some(Status::Unverified), "{name}");
        let results: Vec<String> = fake
            .received_for(TEXT)
            .iter()
            .flat_map(|r| r.tool_results())
            .map(|(_, text)| text)
            .collect();
        assert!(
            results
                .iter()
                .any(|r| r.starts_with("Refused:") && r.contains("behalf")),
            "{name}: {results:?}"
        );
        fake.clear_received();
        fake.push(
            TEXT,
            Answer::tool(
                "review_learned",
                json!({"id": quarantined, "confirm": true}),
            ),
        );
        fake.push(TEXT, Answer::Content("Confirmed.".into()));
        o.say(&o.admin, "confirm the VPN record").await;
        assert_eq!(status().await, Some(Status::Active), "{name}");
    }
}

/// Finding: an administrator minted a key that acts as Ana and read her
/// memory and export with it, and two minted keys made one administrator
/// both people of a two-party decision. Nobody mints a key for someone else.
#[tokio::test]
async fn nobody_reads_a_persons_memory_by_minting_their_key() {
    for (name, db) in both_dbs().await {
        let o = Office::on(db, Config::default()).await;
        let (s, e) = o
            .call(
                "POST",
                "/api/v1/keys",
                &o.admin,
                Some(json!({"user_id": ANA})),
            )
            .await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{name}: {e}");
        // Nor a delegate's key for someone else's delegation.
        let (s, e) = o
            .call(
                "POST",
                "/api/v1/keys",
                &o.admin,
                Some(json!({"user_id": ANA, "on_behalf_of": ADMIN})),
            )
            .await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{name}: {e}");
        // A key acting for Ana makes no key and grants no delegation.
        let (s, e) = o
            .call("POST", "/api/v1/me/keys", &o.for_ana, Some(json!({})))
            .await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{name}: {e}");
        // And it decides nothing of role memory, whatever its maker's role.
        for (method, path) in [
            ("POST", "/api/v1/role-memory/1/accept"),
            ("POST", "/api/v1/role-memory/1/confirm"),
            ("POST", "/api/v1/role-memory/1/retire"),
            ("PATCH", "/api/v1/role-memory/1"),
        ] {
            let body = if method == "PATCH" {
                json!({"content": "x"})
            } else {
                json!({"hash": "x"})
            };
            let body = (!path.ends_with("retire")).then_some(body);
            let (s, e) = o.call(method, path, &o.for_ana, body).await;
            assert_eq!(s, StatusCode::FORBIDDEN, "{name}: {method} {path}: {e}");
        }
        // The delegated key reads as a user: no administrator's route at all.
        let (s, me) = o.call("GET", "/api/v1/me", &o.for_ana, None).await;
        assert_eq!((s, me["role"].as_str()), (StatusCode::OK, Some("user")));
        // Ana's own key reads her memory; nobody else's reaches it.
        let (s, _) = o.call("GET", "/api/v1/me/keys", &o.ana, None).await;
        assert_eq!(s, StatusCode::OK, "{name}");
    }
}

/// Every administrator's route of the OpenAPI document refuses the key
/// acting for Ana (403), as a regular user's key: the route table cannot
/// grow a route that a delegation reaches.
#[tokio::test]
async fn every_admin_route_refuses_a_key_acting_for_someone() {
    let o = Office::on(Db::in_memory().await.unwrap(), Config::default()).await;
    let (s, doc) = o.call("GET", "/api/v1/openapi.json", &o.admin, None).await;
    assert_eq!(s, StatusCode::OK);
    // What any key reaches: its own data, its messages, the role memory it
    // holds (checked by the role store), the document.
    let own = |path: &str| {
        path.starts_with("/api/v1/me")
            || path.starts_with("/api/v1/roles/")
            || path.starts_with("/api/v1/role-memory/")
            || ["/api/v1/messages", "/api/v1/openapi.json"].contains(&path)
    };
    let mut checked = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        if own(path) {
            continue;
        }
        for method in item.as_object().unwrap().keys() {
            let concrete = path
                .replace("{id}", "1")
                .replace("{user}", ANA)
                .replace("{role}", "support")
                .replace("{code}", "ABCDEFGH")
                .replace("{run}", "1")
                .replace("{slug}", "daily")
                .replace("{delegate}", ADMIN);
            let body = (method != "get" && method != "delete").then(|| json!({}));
            let (s, e) = o
                .call(&method.to_uppercase(), &concrete, &o.for_ana, body)
                .await;
            assert_eq!(s, StatusCode::FORBIDDEN, "{method} {path}: {e}");
            assert!(
                e["error"].as_str().unwrap_or_default().contains("behalf"),
                "{method} {path}: {e}"
            );
            checked += 1;
        }
    }
    assert!(checked > 30, "{checked} admin routes");
}

/// Each chat command a person can type is one row of the table: a new
/// command needs a `ChatCommand` variant, whose action the compiler makes
/// `ChatCommand::action` name; this list must reach every variant.
#[test]
fn every_chat_command_and_tool_is_classified() {
    let typed = [
        ("/pair", ChatCommand::Pair),
        ("/pair approve ABCD", ChatCommand::PairDecide),
        ("/pair deny ABCD", ChatCommand::PairDecide),
        ("/skills", ChatCommand::Skills),
        ("/skill approve 1 h", ChatCommand::Skills),
        ("/share 1 support", ChatCommand::Role),
        ("/role list support", ChatCommand::Role),
        ("/role accept 1", ChatCommand::RoleDecide),
        ("/role confirm 1", ChatCommand::RoleDecide),
        ("/memory", ChatCommand::Memory),
        ("What do you remember about me?", ChatCommand::Memory),
        ("/autokeep on", ChatCommand::AutoKeep),
        ("/promote 3", ChatCommand::Promote),
        ("/forget 3", ChatCommand::Forget),
        ("/apikey", ChatCommand::ApiKey),
        ("/web", ChatCommand::Web),
    ];
    for (text, want) in typed {
        assert_eq!(ChatCommand::parse(text), Some(want), "{text}");
    }
    for variant in ChatCommand::VARIANTS {
        assert!(
            typed.iter().any(|(_, v)| v == variant),
            "{variant:?} has no typed example here"
        );
    }
    assert_eq!(ChatCommand::parse("what is the VPN?"), None);
    // Administration is administration wherever it is typed.
    for (command, action) in [
        (ChatCommand::PairDecide, Action::ManagePeople),
        (ChatCommand::Skills, Action::CurateSkills),
        (ChatCommand::RoleDecide, Action::CurateRoleMemory),
        (ChatCommand::ApiKey, Action::OwnKeys),
        (ChatCommand::Web, Action::OwnKeys),
    ] {
        assert_eq!(command.action(), action, "{command:?}");
    }
    // Every tool a model is offered is a `Tool`, and every `Tool` is offered.
    let specs = steward::tools::specs();
    let mut offered: Vec<&str> = specs.iter().map(|s| s.name.as_ref()).collect();
    offered.sort();
    let mut classified: Vec<&str> = Tool::VARIANTS.iter().map(|t| t.name()).collect();
    classified.sort();
    assert_eq!(offered, classified);
    for tool in [Tool::ReviewLearned, Tool::SkillPropose] {
        assert_eq!(tool.action().needs(), Capability::Administer, "{tool:?}");
    }
}

/// `/apikey` in a direct message makes the speaker's own key, shown once:
/// the stored reply keeps no secret, and the key works as them. In a group
/// thread it is refused.
#[tokio::test]
async fn a_person_makes_their_own_key_in_private() {
    for (name, db) in both_dbs().await {
        let o = Office::on(db, Config::default()).await;
        let shown = o.h.dm("222", "/apikey").await;
        let key = shown
            .split_whitespace()
            .find(|w| w.starts_with("stw_"))
            .unwrap_or_else(|| panic!("{name}: a key in {shown}"))
            .to_string();
        let (s, me) = o.call("GET", "/api/v1/me", &key, None).await;
        assert_eq!(
            (s, me["user_id"].as_str()),
            (StatusCode::OK, Some(ANA)),
            "{name}"
        );
        // The history keeps the reply without the secret.
        let history =
            o.h.db()
                .conversations()
                .history("default", "default", "dm:222")
                .await
                .unwrap();
        let kept: Vec<&str> = history.iter().map(|m| m.text.as_str()).collect();
        assert!(
            kept.iter().any(|t| t.contains("shown once")),
            "{name}: {kept:?}"
        );
        assert!(
            !kept.iter().any(|t| t.contains(&key[4..])),
            "{name}: {kept:?}"
        );
        let refused = o.h.group(Some("222"), "team", "/apikey").await;
        assert!(refused.contains("only in private"), "{name}: {refused}");
        assert!(!refused.contains("stw_"), "{name}");
    }
}

/// The dashboard's and the command line's rows of the authorization table.
/// The dashboard's router is built from `dashboard::route_access`'s list, so
/// no route exists without a row: only the pages before sign-in take no
/// action, and every form is a row. The command line's rows are an
/// exhaustive match (`Command::action`): what an operator types maps to the
/// action its surface would need anywhere else.
#[test]
fn every_dashboard_route_and_cli_command_is_classified() {
    use steward::dashboard::{route_access, RouteAccess, FORM_ROUTES};
    let rows = route_access();
    let open: Vec<&str> = rows
        .iter()
        .filter(|(_, access)| *access == RouteAccess::BeforeSignIn)
        .map(|(path, _)| *path)
        .collect();
    assert_eq!(
        open,
        [
            "/dashboard",
            "/dashboard/",
            "/dashboard/static/style.css",
            "/dashboard/login",
            "/dashboard/oidc/start",
            "/web/sign-in/{token}",
            "/dashboard/oidc/callback",
        ]
    );
    for form in FORM_ROUTES {
        assert!(rows.iter().any(|(path, _)| path == form), "{form}");
    }
    let action_of = |path: &str| rows.iter().find(|(p, _)| *p == path).map(|(_, a)| *a);
    for (path, action) in [
        ("/dashboard/chat", Action::Converse),
        ("/dashboard/memory/person", Action::Oversee),
        ("/dashboard/pairing/approve", Action::ManagePeople),
        ("/dashboard/skills/approve", Action::CurateSkills),
        ("/dashboard/revisions/undo", Action::Maintain),
    ] {
        assert_eq!(
            action_of(path),
            Some(RouteAccess::SignedIn(action)),
            "{path}"
        );
    }

    use clap::Parser;
    let action = |argv: &str| {
        steward::cli::Cli::try_parse_from(argv.split_whitespace())
            .unwrap_or_else(|e| panic!("{argv}: {e}"))
            .command
            .action()
    };
    for (argv, want) in [
        ("steward serve", None),
        ("steward replay t.jsonl", None),
        ("steward backup b.db", None),
        ("steward chat", Some(Action::Converse)),
        ("steward pairing approve ABCD", Some(Action::ManagePeople)),
        (
            "steward pairing grant cli:a role_memory.manage --role support",
            Some(Action::ManageRoles),
        ),
        ("steward memory list", Some(Action::Administer)),
        (
            "steward memory list --owner cli:a --reason r",
            Some(Action::Oversee),
        ),
        (
            "steward memory search vpn --as cli:a --reason r",
            Some(Action::Oversee),
        ),
        (
            "steward memory archives show 1 --reason r",
            Some(Action::Oversee),
        ),
        (
            "steward memory review confirm 1",
            Some(Action::ReviewLearned),
        ),
        (
            "steward memory policy add text",
            Some(Action::WriteOperational),
        ),
        ("steward memory revisions undo 1", Some(Action::Maintain)),
        ("steward memory forget 1", Some(Action::Maintain)),
        (
            "steward skills approve 1 --hash abcdefgh",
            Some(Action::CurateSkills),
        ),
        ("steward runs list", Some(Action::Operate)),
        ("steward api-key list", Some(Action::ManageKeys)),
        ("steward dashboard reset-token", Some(Action::Administer)),
    ] {
        assert_eq!(action(argv), want, "{argv}");
    }
}
