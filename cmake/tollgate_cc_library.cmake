# tollgate_cc_library: how every library folder declares its one library (in the spirit of
# Abseil's absl_cc_library).
#
#   tollgate_cc_library(
#     NAME engine                  # the target is tollgate_engine
#     DEPS tollgate_core ...       # public dependencies
#     [PRIVATE_DEPS ...]           # dependencies its headers do not expose
#     [SRCS a.cc b.h ...]          # default: every *.cc and *.h in the folder
#     [EXCLUDE main.cc ...]        # files of the folder that are not part of it
#     [GENERATED x.cc ...])        # generated sources (build tree)
#
# It compiles with the project's warnings (errors, unused absl::Status included), puts the
# repository root on the include path (includes are written from the root), and lists every
# header of the folder in the target, so a header cannot sit in a folder without belonging to
# its library. A folder holds a second target only to keep an optional third-party dependency
# apart (storage/ keeps etcd's gRPC away from the RocksDB store): that one names its SRCS and
# the first one EXCLUDEs them.
function(tollgate_cc_library)
  cmake_parse_arguments(TL "" "NAME" "SRCS;EXCLUDE;DEPS;PRIVATE_DEPS;GENERATED" ${ARGN})
  if(NOT TL_NAME)
    message(FATAL_ERROR "tollgate_cc_library: NAME is required")
  endif()
  if(NOT TL_SRCS)
    file(GLOB TL_SRCS CONFIGURE_DEPENDS RELATIVE ${CMAKE_CURRENT_SOURCE_DIR}
      ${CMAKE_CURRENT_SOURCE_DIR}/*.cc ${CMAKE_CURRENT_SOURCE_DIR}/*.h)
    if(TL_EXCLUDE)
      list(REMOVE_ITEM TL_SRCS ${TL_EXCLUDE})
    endif()
  endif()
  set(_target tollgate_${TL_NAME})
  add_library(${_target} STATIC ${TL_SRCS} ${TL_GENERATED})
  target_include_directories(${_target} PUBLIC ${PROJECT_SOURCE_DIR})
  target_compile_options(${_target} PRIVATE ${TOLLGATE_WARNINGS})
  target_link_libraries(${_target} PUBLIC ${TL_DEPS} PRIVATE ${TL_PRIVATE_DEPS})
endfunction()
