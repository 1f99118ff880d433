# sift_warnings(target): the warning set every Sift target compiles with.
function(sift_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wno-unused-parameter)
endfunction()
