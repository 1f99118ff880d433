// The `data:` section of a study config: the files, their format and split, the label and
// features. ValidateStudyData (config.h), which reads the files, is defined with it.
#pragma once

#include "common/config/config_yaml.h"
#include "common/data/data_spec.h"

namespace sift::common {

// Reads `data:` into `data` and checks what needs no file read (formats, file combinations,
// split fractions).
void ParseData(yamlcfg::MapReader& top, yamlcfg::Diagnostics* d, data::DataSpec* data);

}  // namespace sift::common
