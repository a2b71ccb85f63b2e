package dev.waymark.architecture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.domain.JavaClasses;
import dev.waymark.architecture.fixture.ReachesIntoStoreInternals;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The build rule of issue 30: no class outside module M, main or test code, library or class-path
 * module (cli, demo, bench, chaos, examples), depends on M's internal packages. JPMS enforces the same
 * for the library modules' main code at compile time; this covers the rest.
 */
class ModuleBoundariesTest {

    private static final Path ROOT = Path.of(System.getProperty("waymark.root", "..")).toAbsolutePath().normalize();
    private static final String SELF = "waymark-architecture";

    @Test
    void no_class_depends_on_the_internal_packages_of_another_module() {
        List<ModuleBoundaries.Module> modules = ModuleBoundaries.modules(ROOT, SELF);
        assertThat(modules)
                .extracting(ModuleBoundaries.Module::name)
                .contains(
                        "waymark-core",
                        "waymark-store",
                        "waymark-subscription",
                        "waymark-workflow",
                        "waymark-messaging",
                        "waymark-kafka",
                        "waymark-testkit",
                        "waymark-cli",
                        "waymark-demo",
                        "waymark-bench",
                        "waymark-chaos",
                        "waymark-examples");
        JavaClasses classes = ModuleBoundaries.importClasses(modules);

        ModuleBoundaries.noCrossModuleInternalDependency(modules).check(classes);
    }

    @Test
    void a_cross_module_internal_import_breaks_the_rule() throws URISyntaxException {
        // This module's own test classes, checked as a module of their own next to waymark-store: the
        // fixture imports dev.waymark.store.internal.QueryCounts, as a class in waymark-cli could.
        List<ModuleBoundaries.Module> modules = new ArrayList<>(ModuleBoundaries.modules(ROOT, SELF).stream()
                .filter(m -> m.name().equals("waymark-store"))
                .toList());
        Path ownClasses = Path.of(ReachesIntoStoreInternals.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
        modules.add(new ModuleBoundaries.Module(SELF, List.of(ownClasses)));
        JavaClasses classes = ModuleBoundaries.importClasses(modules);

        assertThatThrownBy(() -> ModuleBoundaries.noCrossModuleInternalDependency(modules).check(classes))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining(ReachesIntoStoreInternals.class.getName())
                .hasMessageContaining("waymark-architecture depends on waymark-store's internal"
                        + " dev.waymark.store.internal.QueryCounts");
    }

    @Test
    void a_package_is_internal_when_one_of_its_segments_is_internal() {
        assertThat(ModuleBoundaries.isInternal("dev.waymark.store.internal")).isTrue();
        assertThat(ModuleBoundaries.isInternal("dev.waymark.subscription.shard.internal")).isTrue();
        assertThat(ModuleBoundaries.isInternal("dev.waymark.store.plumbing")).isFalse();
        assertThat(ModuleBoundaries.isInternal("dev.waymark.internalized")).isFalse();
    }
}
