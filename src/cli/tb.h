/* tb.h: `cordon tb`, the toolbelt's client (see tb.c). */
#ifndef CORDON_CLI_TB_H
#define CORDON_CLI_TB_H

#include <jansson.h>

/* Call op with args (an object, or NULL for none) on this job's toolbelt:
 * the result, or NULL with *why ("reason: message"; the caller frees). */
json_t *tb_call_op(const char *op, json_t *args, char **why);
/* `cordon tb ...`: argv[0] is "tb". */
int cli_tb(int argc, char **argv);

#endif
