package dev.holdfast.shop.web;

import dev.holdfast.shop.invoice.Invoice;
import dev.holdfast.shop.invoice.InvoiceService;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.servlet.mvc.support.RedirectAttributes;

import java.security.Principal;

/**
 * Scenario 4: the invoice run. Page 1 shows the address the invoice will go to and carries the sealed
 * business-transaction state in a hidden field; page 2 issues the invoice only if the order is unchanged.
 */
@Controller
@RequestMapping("/admin/orders/{orderNumber}/invoice")
class AdminInvoiceController {

    private final InvoiceService invoices;
    private final Texts texts;
    private final ViewSupport.Formats fmt;

    AdminInvoiceController(InvoiceService invoices, Texts texts, ViewSupport.Formats fmt) {
        this.invoices = invoices;
        this.texts = texts;
        this.fmt = fmt;
    }

    @GetMapping
    String prepare(@PathVariable String orderNumber, Principal admin, Model model) {
        InvoiceService.Draft draft = invoices.prepare(admin.getName(), FormInput.orderNumber(orderNumber));
        model.addAttribute("order", draft.order());
        model.addAttribute("state", draft.state());
        return "admin-invoice";
    }

    @PostMapping
    String issue(
            @PathVariable String orderNumber,
            @RequestParam(required = false) String state,
            Principal admin,
            RedirectAttributes redirect) {
        String number = FormInput.orderNumber(orderNumber);
        Invoice invoice = invoices.issue(admin.getName(), number, state);
        Notices.success(
                redirect, texts.html("invoice.issued", invoice.getId(), number, fmt.shipping(invoice.getBillTo())));
        return "redirect:/admin/orders/" + number;
    }
}
