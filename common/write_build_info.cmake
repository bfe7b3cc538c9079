# Run at build time (cmake -P): writes build_info_values.cc, touching it only when it changes.
#
# The one version string every binary's `version`, tollgated's InfoService and the
# kueue_build_info metric report: PROJECT_VERSION (project() in the top CMakeLists.txt, also the
# Debian package's version) plus the git commit as build metadata, "0.1.0+11f9803-dirty"; just
# "0.1.0" on the release tag v0.1.0; and without git, TOLLGATE_VERSION when set, else
# PROJECT_VERSION.
execute_process(
  COMMAND git describe --tags --always --dirty
  WORKING_DIRECTORY ${SOURCE_DIR}
  OUTPUT_VARIABLE GIT_DESCRIBE
  OUTPUT_STRIP_TRAILING_WHITESPACE
  ERROR_QUIET
  RESULT_VARIABLE GIT_RESULT)
if(NOT GIT_RESULT EQUAL 0 OR GIT_DESCRIBE STREQUAL "")
  if(FALLBACK_VERSION)
    set(VERSION_STRING "${FALLBACK_VERSION}")
  else()
    set(VERSION_STRING "${PROJECT_VERSION}")
  endif()
elseif(GIT_DESCRIBE STREQUAL "v${PROJECT_VERSION}")
  set(VERSION_STRING "${PROJECT_VERSION}")
else()
  set(VERSION_STRING "${PROJECT_VERSION}+${GIT_DESCRIBE}")
endif()
foreach(var VERSION_STRING BUILD_TYPE COMPILER GRPC_VERSION PROTOBUF_VERSION ABSL_VERSION ROCKSDB_VERSION
            YAML_CPP_VERSION)
  if("${${var}}" STREQUAL "")
    set(${var} "unknown")
  endif()
endforeach()
configure_file(${TEMPLATE} ${OUTPUT} @ONLY)
