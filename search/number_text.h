// Numbers in decision reasons and parameter listings, written as printf's "%.6g" writes them.
#pragma once

#include <string>

namespace sift::search {

// "%.6g" through std::to_chars: the same text, in a time that hardly depends on the value, where
// glibc's printf took up to 2x longer for some; that made ASHA's stop reason, the bulk of its
// OnReport, grow from 0.14 to 0.23 us between trial 100 and trial 10,000 of the decision bench.
std::string G6(double value);

}  // namespace sift::search
