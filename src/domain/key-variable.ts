import { z } from "zod";
import { isKeyVariableName, KEY_VARIABLE_MESSAGE } from "./secrets.js";

/**
 * The name of the environment variable holding an endpoint's key (`api_key_env`), wherever a
 * config, an upstream or a check names one: the key itself never enters a file the lab reads, and
 * no other variable of the lab's environment can be named to be sent (see isKeyVariableName).
 */
export const KeyVariable = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable name")
  .refine(isKeyVariableName, KEY_VARIABLE_MESSAGE);
