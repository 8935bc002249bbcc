/* client.h: `cordon job ...`, the management API's client. */
#ifndef CORDON_HOSTD_CLIENT_H
#define CORDON_HOSTD_CLIENT_H

int hostd_job_main(int argc, char **argv);

#endif
