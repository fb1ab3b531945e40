//! The dashboard in a real headless Chromium, driven over WebDriver
//! (`chromedriver`, started by the test) against a real server on 127.0.0.1:
//! sign in, approve a pairing request, teach a note and accept "Remember
//! this?" with the Yes button, see it in the memory browser, supersede it,
//! and undo that revision. Every page is saved as a PNG in `tests/artifacts/`.

use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use memory::write::RawWrites;
use memory::{NewRecord, Role, Scope, Status};
use std::sync::Arc;
use steward::Services;
use steward_tests::dashboard::{self, artifacts, pair_request, Chromedriver, TOKEN};
use steward_tests::Harness;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admin_runs_the_dashboard_in_a_real_browser() {
    let h = Harness::with_config(dashboard::config()).await;
    // A pending pairing request, made through the turn loop with /pair.
    let code = pair_request(&h.turns, "555").await;
    let services = h.services.clone();
    in_browser(&h, |c, base| walk(c, base, services, code)).await;
}

/// Serve `h`'s loop on 127.0.0.1 and run `walk` in a headless Chromium
/// against it, on its own task so the browser is closed even when it fails.
async fn in_browser<W, F>(h: &Harness, walk: W)
where
    W: FnOnce(Client, String) -> F,
    F: std::future::Future<Output = ()> + Send + 'static,
{
    let addr = dashboard::serve(h.services.clone()).await;
    let driver = Chromedriver::start();
    let client = ClientBuilder::new(HttpConnector::new())
        .capabilities(driver.capabilities())
        .connect(&driver.url)
        .await
        .expect("a Chromium session from chromedriver");
    let walked = tokio::spawn(walk(client.clone(), format!("http://{addr}"))).await;
    let _ = client.close().await;
    if let Err(e) = walked {
        std::panic::resume_unwind(e.into_panic());
    }
}

async fn shot(c: &Client, name: &str) {
    let png = c.screenshot().await.expect("screenshot");
    std::fs::write(artifacts().join(format!("{name}.png")), png).expect("save screenshot");
}

async fn wait_for(c: &Client, css: &str) -> Element {
    c.wait()
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("no {css}: {e}"))
}

async fn wait_for_xpath(c: &Client, xpath: &str) -> Element {
    c.wait()
        .for_element(Locator::XPath(xpath))
        .await
        .unwrap_or_else(|e| panic!("no {xpath}: {e}"))
}

async fn click(c: &Client, css: &str) {
    c.find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("no {css}: {e}"))
        .click()
        .await
        .unwrap_or_else(|e| panic!("clicking {css}: {e}"));
}

async fn text_of(c: &Client, css: &str) -> String {
    wait_for(c, css).await.text().await.expect("text")
}

/// Type `token` into the sign-in form and send it.
async fn sign_in_with(c: &Client, token: &str) {
    wait_for(c, "input#token")
        .await
        .send_keys(token)
        .await
        .expect("type");
    click(c, "form button[type=submit]").await;
}

async fn say(c: &Client, text: &str) {
    let input = wait_for(c, "form.compose input[name=text]").await;
    input.send_keys(text).await.expect("type");
    click(c, "form.compose button[type=submit]").await;
}

fn now() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

async fn walk(c: Client, base: String, services: Arc<Services>, code: String) {
    let db = services.db().clone();
    let records = |needle: &'static str| {
        let db = db.clone();
        async move {
            let filter = memory::store::RecordFilter {
                text: Some(needle.into()),
                ..Default::default()
            };
            db.records()
                .list("default", &filter)
                .await
                .expect("search")
                .into_iter()
                .filter(|r| r.content.contains(needle))
                .collect::<Vec<_>>()
        }
    };

    // Unauthenticated: the dashboard sends the browser to the sign-in page.
    c.goto(&format!("{base}/dashboard/memory"))
        .await
        .expect("open");
    wait_for(&c, "input#token").await;
    assert_eq!(
        c.current_url().await.expect("url").path(),
        "/dashboard/login"
    );
    shot(&c, "01-sign-in").await;
    // A wrong token is refused.
    sign_in_with(&c, "not-the-token").await;
    assert!(text_of(&c, "#flash").await.contains("not the admin token"));
    // The admin token signs in and lands on the chat.
    sign_in_with(&c, TOKEN).await;
    wait_for(&c, "form.compose").await;
    let cookies = c.get_all_cookies().await.expect("cookies");
    let session = cookies
        .iter()
        .find(|k| k.name() == "steward_session")
        .expect("a session cookie");
    assert_eq!(session.http_only(), Some(true));
    assert_eq!(session.path(), Some("/dashboard"));

    // Pairing: approve the pending request as a user.
    c.goto(&format!("{base}/dashboard/pairing"))
        .await
        .expect("open");
    let row = format!("tr#request-{code}");
    assert!(text_of(&c, &row).await.contains("discord:555"));
    shot(&c, "02-pairing-request").await;
    click(&c, &format!("{row} button.primary")).await;
    assert!(text_of(&c, "#flash.ok")
        .await
        .contains("(discord:555) is paired as user"));
    let paired = services
        .pairing()
        .resolve("default", "discord:555")
        .await
        .expect("resolve")
        .expect("paired");
    assert_eq!(paired.role, Role::User);
    shot(&c, "03-pairing-approved").await;
    // The new user keeps something personal (explicit, so saved at once).
    let mut msg = dashboard::dm_now("555", "remember that I prefer short answers");
    msg.sender_name = "Dana".into();
    services.turns().handle(&msg).await.expect("turn");
    // And a relearned note waits in the review queue.
    let quarantined = NewRecord {
        org: "default".into(),
        agent: "default".into(),
        scope: Scope::AgentNotes,
        owner: None,
        subject: "vpn host".into(),
        kind: "hostname".into(),
        content: "The VPN host is vpn2.example.net".into(),
        status: Status::Unverified,
        source: "relearn:archive:1".into(),
        said_at: now(),
        recorded_at: now(),
        expires_at: None,
        conversation: None,
        batch: None,
        author: Some("discord:555".into()),
        on_behalf_of: None,
    };
    db.records()
        .insert_record(&quarantined)
        .await
        .expect("insert");

    // Chat: an admin's operational statement asks "Remember this?"; Yes saves it.
    c.goto(&format!("{base}/dashboard/chat"))
        .await
        .expect("open");
    say(&c, "From now on the daily report uses example_orders").await;
    assert!(text_of(&c, "#proposal")
        .await
        .contains("The daily report uses example_orders"));
    shot(&c, "04-chat-remember-this").await;
    click(&c, "#proposal button.primary").await;
    wait_for_xpath(
        &c,
        "//div[contains(@class,'bot')]/div[@class='text'][contains(., 'Written: agent_notes updated')]",
    )
    .await;
    assert!(c.find(Locator::Css("#proposal")).await.is_err(), "answered");
    let first = records("example_orders").await;
    assert_eq!(first[0].status, Status::Active);
    assert_eq!(first[0].scope, Scope::AgentNotes);
    let first_id = first[0].id;
    shot(&c, "05-chat-saved").await;

    // The memory browser shows it.
    c.goto(&format!("{base}/dashboard/memory"))
        .await
        .expect("open");
    let row = format!("tr#record-{first_id}");
    assert!(text_of(&c, &row).await.contains("example_orders"));
    shot(&c, "06-memory").await;

    // A second note on the same subject supersedes the first.
    c.goto(&format!("{base}/dashboard/chat"))
        .await
        .expect("open");
    say(&c, "From now on the daily report uses example_archive").await;
    assert!(text_of(&c, "#proposal").await.contains("example_archive"));
    click(&c, "#proposal button.primary").await;
    wait_for_xpath(
        &c,
        "(//div[contains(@class,'bot')]/div[@class='text'][contains(., 'Written: agent_notes updated')])[2]",
    )
    .await;
    assert_eq!(
        records("example_orders").await[0].status,
        Status::Superseded
    );
    c.goto(&format!(
        "{base}/dashboard/memory?scope=agent_notes&status=all"
    ))
    .await
    .expect("open");
    assert!(text_of(&c, &format!("{row} .badge"))
        .await
        .contains("superseded"));
    shot(&c, "07-memory-superseded").await;

    // Undo that revision: the old note is active again.
    c.goto(&format!("{base}/dashboard/revisions"))
        .await
        .expect("open");
    let rev = db.records().revisions("default").await.expect("revisions")[0].clone();
    assert_eq!(rev.retired_id, first_id);
    let rev_row = format!("tr#revision-{}", rev.id);
    assert!(text_of(&c, &rev_row).await.contains("example_orders"));
    shot(&c, "08-revisions").await;
    click(&c, &format!("{rev_row} button")).await;
    assert!(text_of(&c, "#flash.ok")
        .await
        .contains(&format!("record #{first_id} is active again")));
    let state = text_of(&c, &format!("{rev_row} td.state")).await;
    assert!(
        state.contains("undone") && state.contains("by admin"),
        "{state}"
    );
    assert_eq!(records("example_orders").await[0].status, Status::Active);
    assert_eq!(records("example_archive").await[0].status, Status::Active);
    shot(&c, "09-revisions-undone").await;
    c.goto(&format!("{base}/dashboard/memory"))
        .await
        .expect("open");
    assert!(text_of(&c, &format!("{row} .badge"))
        .await
        .contains("active"));

    // The review queue, the people list, one person's memory (audited), the audit log.
    c.goto(&format!("{base}/dashboard/review"))
        .await
        .expect("open");
    assert!(text_of(&c, "table.review")
        .await
        .contains("vpn2.example.net"));
    shot(&c, "10-review").await;
    c.goto(&format!("{base}/dashboard/memory?scope=people"))
        .await
        .expect("open");
    assert!(text_of(&c, "table.people").await.contains("discord:555"));
    shot(&c, "11-people").await;
    // Opening a person's memory needs a reason, typed into the row's form.
    wait_for(
        &c,
        "table.people tr[data-person='discord:555'] input[name=reason]",
    )
    .await
    .send_keys("checking the walkthrough")
    .await
    .expect("type");
    click(&c, "table.people tr[data-person='discord:555'] button").await;
    assert!(text_of(&c, "table.records").await.contains("short answers"));
    shot(&c, "12-person").await;
    c.goto(&format!("{base}/dashboard/audit"))
        .await
        .expect("open");
    let audit = text_of(&c, "table.audit").await;
    for action in ["memory.view", "revision.undo", "pairing.approve"] {
        assert!(audit.contains(action), "{action} in {audit}");
    }
    shot(&c, "13-audit").await;

    // Signing out ends the session: the pages send the browser back to sign-in.
    click(&c, "form[action='/dashboard/logout'] button").await;
    wait_for(&c, "input#token").await;
    c.goto(&format!("{base}/dashboard/chat"))
        .await
        .expect("open");
    wait_for(&c, "input#token").await;
}

/// The settings page in a real Chromium: each agent's `auto_keep`, secrets
/// hidden, long audit details wrapped inside the page, and a 404 page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_settings_page_in_a_real_browser() {
    let mut cfg = steward::Config::from_toml(
        "[agents.it]\nauto_keep = true\n[metrics]\ntoken = \"metrics-secret-0123456789\"",
    )
    .expect("config");
    cfg.dashboard.admin_token = Some(TOKEN.into());
    let h = Harness::with_config(cfg).await;
    // An audit entry with one very long word, as a pasted URL or hash is.
    let long_word = memory::admin_text::AdminText::fixed("x".repeat(600).leak());
    h.db()
        .audit()
        .append("default", "cli", "test.long", "someone", &long_word, now())
        .await
        .expect("audit");
    in_browser(&h, settings_walk).await;
}

async fn settings_walk(c: Client, base: String) {
    c.goto(&format!("{base}/")).await.expect("open");
    // `/` is the dashboard, which first asks for the token.
    sign_in_with(&c, TOKEN).await;
    wait_for(&c, "form.compose").await;
    c.goto(&format!("{base}/dashboard/settings"))
        .await
        .expect("open");
    assert_eq!(text_of(&c, "nav a.active").await, "Settings");
    let it = text_of(&c, "tr#agent-it").await;
    assert!(
        it.contains("on") && it.contains("agents.it.auto_keep"),
        "{it}"
    );
    let default = text_of(&c, "tr#agent-default").await;
    assert!(
        default.contains("off") && default.contains("memory.auto_keep"),
        "{default}"
    );
    let token = wait_for_xpath(&c, "//tr[@id='setting-metrics.token']")
        .await
        .text()
        .await
        .expect("text");
    assert!(token.contains("(set, hidden)"), "{token}");
    let source = c.source().await.expect("source");
    assert!(!source.contains("metrics-secret-0123456789") && !source.contains(TOKEN));
    shot(&c, "10-settings").await;

    // The long word wraps: the audit table stays within the page.
    c.goto(&format!("{base}/dashboard/audit"))
        .await
        .expect("open");
    let (_, _, main_width, _) = wait_for(&c, "main").await.rectangle().await.expect("main");
    let (_, _, table_width, _) = wait_for(&c, "table.audit")
        .await
        .rectangle()
        .await
        .expect("table");
    assert!(
        table_width <= main_width,
        "the audit table is {table_width}px wide in a {main_width}px page"
    );
    shot(&c, "11-audit-long-detail").await;

    // A page that does not exist.
    c.goto(&format!("{base}/dashboard/no-such-page"))
        .await
        .expect("open");
    assert_eq!(text_of(&c, "h1").await, "Not found");
    shot(&c, "12-not-found").await;
}

/// A paired person sends `/web` in a direct message and opens the link in
/// a real Chromium: the button signs them in as themselves, onto their own
/// memory and away from the admin pages; the same link a second time signs
/// nobody in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_web_link_signs_a_person_in_once_in_a_real_browser() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let mut cfg = dashboard::config();
    cfg.dashboard.public_url = Some(base.clone());
    let h = Harness::with_config(cfg).await;
    let ana = h.pair("777", Role::User).await;
    dashboard::serve_on(listener, h.services.clone());
    let sent = steward_tests::join(
        h.turns
            .handle(&dashboard::dm_now("777", "/web"))
            .await
            .expect("turn"),
    );
    let start = format!("{base}/web/sign-in/");
    let link: String = sent[sent.find(&start).expect("a link")..]
        .chars()
        .take_while(|c| !c.is_whitespace())
        .collect();
    let driver = Chromedriver::start();
    let c = ClientBuilder::new(HttpConnector::new())
        .capabilities(driver.capabilities())
        .connect(&driver.url)
        .await
        .expect("a Chromium session from chromedriver");
    let walked = tokio::spawn({
        let c = c.clone();
        async move {
            c.goto(&link).await.expect("open the link");
            wait_for(&c, "#use-link").await;
            shot(&c, "web-link").await;
            click(&c, "#use-link").await;
            // Signed in, the person lands on their own memory.
            let me = wait_for_xpath(&c, "//h2[text()='Your memory']").await;
            assert!(me.text().await.expect("text").contains("Your memory"));
            let page = c.source().await.expect("page");
            assert!(page.contains(&ana), "{page}");
            assert_eq!(c.current_url().await.expect("url").path(), "/dashboard/me");
            c.goto(&format!("{base}/dashboard/pairing"))
                .await
                .expect("open");
            let refused = c.source().await.expect("page");
            assert!(refused.contains("Forbidden"), "{refused}");
            // The link is spent: in a fresh browser state, it signs nobody in.
            c.delete_all_cookies().await.expect("sign out");
            c.goto(&link).await.expect("open the link again");
            click(&c, "#use-link").await;
            wait_for_xpath(&c, "//*[contains(text(), 'already used')]").await;
            c.goto(&format!("{base}/dashboard/me")).await.expect("open");
            wait_for(&c, "input#token").await;
        }
    })
    .await;
    let _ = c.close().await;
    if let Err(e) = walked {
        std::panic::resume_unwind(e.into_panic());
    }
}
