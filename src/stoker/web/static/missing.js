// The page for a dashboard address that has none: only the header is live.
import { showWho } from "./common.js";

showWho();
