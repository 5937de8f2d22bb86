// SPDX-License-Identifier: LGPL-2.1-or-later
// `hetpu su report`: what the ledger holds, per job or totalled by user, partition or app.
#pragma once

namespace hetpu::su {

int report_command(int argc, char **argv);

}  // namespace hetpu::su
