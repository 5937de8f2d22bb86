// SPDX-License-Identifier: LGPL-2.1-or-later
// `hetpu batch`: run a file of shell command lines N at a time (see batch_runner.h).
#pragma once

namespace hetpu::batch {

int batch_command(int argc, char **argv);

}  // namespace hetpu::batch
