// The interface the MCP tools talk to. Today the host runs inside the MCP server's process;
// later a detached per-machine daemon can serve the same interface.
import type { z } from "zod";
import type { statusInput, statusOutput, takeoverInput, takeoverOutput } from "../schemas/tools.js";

type Out<S extends z.ZodRawShape> = z.infer<z.ZodObject<S>>;
type In<S extends z.ZodRawShape> = z.input<z.ZodObject<S>>;

export type StatusInput = In<typeof statusInput>;
export type StatusResult = Out<typeof statusOutput>;
export type TakeoverInput = In<typeof takeoverInput>;
export type TakeoverResult = Out<typeof takeoverOutput>;

export interface Host {
  status(input: StatusInput): Promise<StatusResult>;
  takeover(input: TakeoverInput): Promise<TakeoverResult>;
}
