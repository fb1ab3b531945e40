//! The tests' MCP server over stdio: `mcp_fixture TOOLS_JSON LOG_FILE`
//! (`steward_tests::mcp_fixture`).

use rmcp::ServiceExt;
use steward_tests::mcp_fixture::Fixture;

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(tools), Some(log)) = (args.next(), args.next()) else {
        eprintln!("usage: mcp_fixture TOOLS_JSON LOG_FILE");
        std::process::exit(2);
    };
    let fixture = Fixture {
        tools: tools.into(),
        log: log.into(),
    };
    match fixture.serve(rmcp::transport::stdio()).await {
        Ok(running) => {
            let _ = running.waiting().await;
        }
        Err(e) => {
            eprintln!("mcp_fixture: {e}");
            std::process::exit(1);
        }
    }
}
