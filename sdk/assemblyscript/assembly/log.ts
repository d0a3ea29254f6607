// Logging to the host (sdk/ABI.md §6: kadu.log).

import { hostLog } from "./host";

/** Log levels of the host. */
export enum LogLevel {
  Debug = 0,
  Info = 1,
  Warn = 2,
  Error = 3,
}

/**
 * Writes to the host's log. The host adds the bundle, its version, the
 * organisation and the request id, cuts a message at 4 KiB and
 * rate-limits per instance. Log identifiers and decisions, never secrets,
 * file contents or execution output.
 */
export namespace log {
  /** Writes message at level (0 debug … 3 error; other values are taken as info). */
  export function write(level: i32, message: string): void {
    hostLog(level, message);
  }
  export function debug(message: string): void {
    hostLog(LogLevel.Debug, message);
  }
  export function info(message: string): void {
    hostLog(LogLevel.Info, message);
  }
  export function warn(message: string): void {
    hostLog(LogLevel.Warn, message);
  }
  export function error(message: string): void {
    hostLog(LogLevel.Error, message);
  }
}
