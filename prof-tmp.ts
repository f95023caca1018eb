import { generateSnapshot } from "/work/main/bench/rebuild.ts";
import { rebuild } from "/work/main/server/state/rebuild.ts";
const s = generateSnapshot(10000);
const cfg = {labels:{ready:"ready-for-agent",escalate:"ready-for-human",epic:["epic","prd"],priority_high:"priority:high",attempt_prefix:"afk-attempt/"},selectors:[{label:"urgent"},{tags:["api"]},{label:"ready-for-agent"}],gate:{ci:"required" as const},lease:{ttl_seconds:4500,heartbeat_seconds:600}};
const now = new Date("2025-06-01T12:00:00.000Z");
for (let i=0;i<30;i++) rebuild(s,cfg,"me1",now);
