#!/bin/bash
# srt-unprivileged.t: the isolation suite against `--provider srt`, run as
# the unprivileged user cordon-test (see srt.t and unprivileged.t).
exec bash "$(dirname "$0")/srt.t" unprivileged
