package dev.holdfast.shop.browser;

import org.junit.jupiter.api.extension.AfterTestExecutionCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/** Saves a screenshot of every open browser when a test fails, before anything is cleaned up. */
final class ScreenshotOnFailure implements AfterTestExecutionCallback {

    @Override
    public void afterTestExecution(ExtensionContext context) {
        if (context.getExecutionException().isEmpty()) {
            return;
        }
        String name = "FAILED-" + context.getRequiredTestClass().getSimpleName() + "-"
                + context.getRequiredTestMethod().getName();
        for (Browser browser : Browser.OPEN) {
            try {
                browser.screenshot(name);
            } catch (RuntimeException e) {
                context.getExecutionException().get().addSuppressed(e);
            }
        }
    }
}
