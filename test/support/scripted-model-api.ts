// The suite's scripted model API is the demo's (server/demo/scripted-model.ts): one double of the
// Anthropic Messages and OpenAI Responses APIs on 127.0.0.1, for the tests and `demo --engine`.
export {
  startScriptedModel,
  type ScriptStep,
  type ScriptedModel,
  type ScriptedModelOptions,
  type ScriptedTurn,
  type TurnUsage,
} from "../../server/demo/scripted-model.js";
