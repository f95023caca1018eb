// What real agent CLIs print when they cannot work: test data for the fleet's runtime-failure
// recognition. Each text says where it comes from:
// - "measured": printed by the CLI installed from npm and run headless here, with no login, no
//   network and as root (Claude Code 2.1.197, Codex and Gemini CLI as published on npm in
//   December 2026), never with a credential: a made-up key at most, sent to a loopback server
//   that answers 401 or 403 (ANTHROPIC_BASE_URL, a Codex model_provider with that base_url);
// - "reported": quoted in a public issue thread (given as owner/repo#n), for situations we
//   cannot reproduce without an account (a rejected real key, a 403 from a provider).
import type { AgentRuntime, QuotaKind } from "../../server/agent/quota.js";

export interface RuntimeText {
  runtime: AgentRuntime;
  kind: QuotaKind;
  source: "measured" | "reported";
  /** For reported texts: the thread that quotes it. */
  ref?: string;
  situation: string;
  /** One line of output, as the CLI prints it. */
  line: string;
}

export const RUNTIME_TEXTS: readonly RuntimeText[] = [
  // ---- Claude Code
  {
    runtime: "claude",
    kind: "refusal",
    source: "measured",
    situation: "--dangerously-skip-permissions (or --permission-mode bypassPermissions) as root; exit 1",
    line: "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons",
  },
  { runtime: "claude", kind: "auth", source: "measured", situation: "no login, text output; exit 1", line: "Not logged in · Please run /login" },
  {
    runtime: "claude",
    kind: "quota",
    source: "measured",
    situation:
      "API key, a plan-limit 429 (anthropic-ratelimit-unified-status: rejected) from a loopback model API, --output-format stream-json: the result line; exit 1",
    line: '{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"duration_ms":472,"duration_api_ms":0,"num_turns":1,"result":"API Error: Request rejected (429) · This request would exceed your account\'s rate limit. Please try again later.","stop_reason":"stop_sequence","session_id":"dc7a0710-753b-4802-9439-da8f3aed360d","total_cost_usd":0}',
  },
  {
    runtime: "claude",
    kind: "quota",
    source: "measured",
    situation: "API key, a plan-limit 429, stream-json: the synthetic assistant message before the result",
    line: '{"type":"assistant","message":{"id":"cef330c7-e544-48b2-8746-fd249df2e96a","model":"<synthetic>","role":"assistant","type":"message","content":[{"type":"text","text":"API Error: Request rejected (429) · This request would exceed your account\'s rate limit. Please try again later."}]},"session_id":"dc7a0710-753b-4802-9439-da8f3aed360d","error":"rate_limit"}',
  },
  {
    runtime: "claude",
    kind: "auth",
    source: "measured",
    situation: "no login, --output-format stream-json: the result line (subtype success, is_error true)",
    line: '{"type":"result","subtype":"success","is_error":true,"api_error_status":null,"duration_ms":279,"duration_api_ms":0,"num_turns":1,"result":"Not logged in · Please run /login","stop_reason":"stop_sequence","session_id":"f6006395-105f-4c07-b729-e72736b71e6f","total_cost_usd":0}',
  },
  {
    runtime: "claude",
    kind: "network",
    source: "measured",
    situation: "a made-up key and no network, stream-json: a retry event with no HTTP status, 10 of them with growing delays",
    line: '{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":506.52847207408234,"error_status":null,"error":"unknown","session_id":"fee2de80-4465-493c-91af-e69f0d0a6f90","uuid":"492159c2-285e-4a70-a927-98b146f92ed8"}',
  },
  {
    runtime: "claude",
    kind: "auth",
    source: "reported",
    ref: "Xuanwo/acp-claude-code#42",
    situation: "a key the API rejects",
    line: "Invalid API key · Please run /login",
  },
  {
    runtime: "claude",
    kind: "auth",
    source: "measured",
    situation: "the API answers 403, text output; exit 1",
    line: "Failed to authenticate. API Error: 403 forbidden",
  },
  {
    runtime: "claude",
    kind: "auth",
    source: "measured",
    situation: "the API answers 401, stream-json: it retries (10 times, growing delays) before giving up",
    line: '{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":617.9621834999134,"error_status":401,"error":"authentication_failed","session_id":"c6fd5e94-3e17-4999-a8d1-c83d71412e3d","uuid":"c2fbbb3c-8651-49dd-97de-af10c5cb41d8"}',
  },
  // ---- Codex
  {
    runtime: "codex",
    kind: "network",
    source: "measured",
    situation: "no network, --json: five reconnects over WebSocket",
    line: '{"type":"error","message":"Reconnecting... 2/5 (stream disconnected before completion: failed to lookup address information: Name does not resolve)"}',
  },
  {
    runtime: "codex",
    kind: "network",
    source: "measured",
    situation: "no network, --json, after falling back to HTTPS: repeats until killed",
    line: '{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}',
  },
  {
    runtime: "codex",
    kind: "auth",
    source: "measured",
    situation: "the endpoint answers 401, --json: five of these",
    line: '{"type":"error","message":"Reconnecting... 1/5 (unexpected status 401 Unauthorized: invalid x-api-key, url: http://127.0.0.1:18401/v1/responses)"}',
  },
  {
    runtime: "codex",
    kind: "auth",
    source: "measured",
    situation: "the endpoint answers 401, --json: the final line; exit 1",
    line: '{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: invalid x-api-key, url: http://127.0.0.1:18401/v1/responses"}}',
  },
  // ---- Gemini CLI
  {
    runtime: "gemini",
    kind: "auth",
    source: "measured",
    situation: "no auth configured, -p; exit 41",
    line: "Please set an Auth method in your /home/agent/.gemini/settings.json or specify one of the following environment variables before running: GEMINI_API_KEY, GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA",
  },
  {
    runtime: "gemini",
    kind: "network",
    source: "measured",
    situation: "a made-up key and no network: retries with backoff, then exit 1",
    line: "Attempt 1 failed. Retrying with backoff... Error: exception TypeError: fetch failed sending request",
  },
  {
    runtime: "gemini",
    kind: "auth",
    source: "reported",
    ref: "google-gemini/gemini-cli#25607",
    situation: "a 403 from Code Assist (one line of its JSON body)",
    line: '      "status": "PERMISSION_DENIED"',
  },
  // ---- cursor-agent
  {
    runtime: "cursor",
    kind: "auth",
    source: "reported",
    ref: "nexu-io/open-design#951 (the texts it classifies as auth-required)",
    situation: "print mode without a login",
    line: "Authentication required. Please run 'cursor-agent login' first, or set CURSOR_API_KEY environment variable.",
  },
  // ---- aider
  {
    runtime: "aider",
    kind: "auth",
    source: "reported",
    ref: "Aider-AI/aider#1490",
    situation: "a rejected Anthropic key",
    line: `Unexpected error: litellm.AuthenticationError: AnthropicException - b'{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}'`,
  },
  {
    runtime: "aider",
    kind: "auth",
    source: "reported",
    ref: "Aider-AI/aider#3802",
    situation: "the summary line after any auth error",
    line: "The API provider is not able to authenticate you. Check your API key.",
  },
];

/** Output that must never pause the fleet: an agent's ordinary work. */
export const ORDINARY_TEXTS: readonly string[] = [
  "Reconnecting the websocket client in src/net.ts",
  "test: returns 401 when the token is missing ... ok",
  "Add a not-logged-in banner to the header",
  '{"type":"item.completed","item":{"id":"item_3","type":"command_execution","aggregated_output":"Reconnecting... waiting for network"}}',
  '{"type":"tool_result","content":"--dangerously-skip-permissions cannot be used with root/sudo privileges"}',
  "GET /api/users 403 Forbidden (expected in this test)",
];
