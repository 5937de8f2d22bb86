#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# crash.sh with the writer's data on two OpenCL devices, captured by the device cache tier.
exec "$(dirname "$0")/crash.sh" device
